/*
 * main.c - vep-keytool: the domain administrator's tool for keys,
 * support documents, offline certificates, and relying-party checks.
 *
 * Owns the subcommand table and dispatch; each command lives in its group's
 * file (cmd_key.c, cmd_support.c, cmd_cert.c, cmd_verify.c, cmd_inspect.c,
 * cmd_instances.c; on the authority's store, a state directory or a
 * PostgreSQL store, cmd_audit.c, cmd_sessions.c, cmd_throttle.c,
 * cmd_backup.c).
 * Must never hold state across commands: one command per process.
 */
#include <stdio.h>
#include <string.h>

#include "cmd_audit.h"
#include "cmd_state.h"
#include "kt.h"
#include "vep_version.h"

static const struct kt_cmd kt_cmds[] = {
	{ "genkey", kt_cmd_genkey, "--out FILE [--alg RS256|RS128|DS128|DS256]",
	  "Generates a private key (default RS256: RSA-2048, the only size every\n"
	  "deployed verifier accepts for a domain key) into a new file, mode 0600.\n"
	  "Refuses to overwrite an existing file. Other algorithms are for user\n"
	  "keys in tests.\n" },
	{ "pubkey", kt_cmd_pubkey, "[--fingerprint] (FILE | --dir DIR)",
	  "Prints the BrowserID public key JSON of a private key file (or of the\n"
	  "current key of a key directory); with --fingerprint, its SHA-256\n"
	  "fingerprint instead.\n" },
	{ "init", kt_cmd_init, "--dir DIR",
	  "Creates DIR (0700) and a current key if it has none; prints the\n"
	  "current key's fingerprint. Leaves existing keys alone.\n" },
	{ "prepare", kt_cmd_prepare, "--dir DIR",
	  "Generates the next key (next.pem): published in \"keys\" but not yet\n"
	  "signing, so verifiers that cache the support document know it before\n"
	  "it signs. Reload the authority, wait at least max_age, then rotate.\n" },
	{ "rotate", kt_cmd_rotate, "--dir DIR",
	  "Makes the current key the previous one (retiring the older previous)\n"
	  "and the next key current (a new one is generated when there is no\n"
	  "next key); prints its fingerprint. Certificates signed with the old\n"
	  "key keep verifying while it is published as previous; reload the\n"
	  "authority afterwards.\n" },
	{ "retire", kt_cmd_retire, "--dir DIR (--state DIR | --database CONNINFO | --force)",
	  "Removes the previous key once no certificate it signed can still be\n"
	  "valid. --state DIR (the authority's state_dir) or --database CONNINFO\n"
	  "(the PostgreSQL store the instances share) lets it ask the audit trail\n"
	  "when the last one expires: before then it refuses (exit 1) and says\n"
	  "until when. --force retires without asking (certificates issued\n"
	  "before the audit recorded signers, i.e. before this version, are not\n"
	  "known to it). On several instances, check with `instances` that all\n"
	  "of them publish the same keys first.\n" },
	{ "keys", kt_cmd_keys, "--dir DIR",
	  "Lists the keys of a key directory: role, algorithm, fingerprint.\n" },
	{ "support-doc", kt_cmd_support_doc,
	  "(--dir DIR [--authentication PATH] [--provisioning PATH] | --delegate HOST | "
	  "--disabled)",
	  "Prints the support document the authority serves at\n"
	  "/.well-known/browserid: the current key as \"public-key\", current and\n"
	  "next and previous keys as \"keys\", and the IdP page paths (defaults\n"
	  "/sign-in/authenticate and /sign-in/provision). --delegate HOST prints\n"
	  "a delegation to HOST; --disabled an opt-out.\n" },
	{ "certify", kt_cmd_certify,
	  "(--key FILE | --dir DIR) --email ADDR --pubkey FILE [--duration SECONDS] "
	  "[--issuer DOMAIN]",
	  "Issues an identity certificate offline and prints it. --pubkey is the\n"
	  "user's public key JSON (or a PEM private key file, whose public half is\n"
	  "used). The issuer defaults to the email's domain. --issuer may name\n"
	  "another domain: verifiers accept that only when the email's domain\n"
	  "delegates to it, which is the one case it exists for (a note is\n"
	  "printed). iat is back-dated 10 s; --duration defaults to 3600 and is\n"
	  "capped at 86400 (24 h), with a warning.\n" },
	{ "sign-assertion", kt_cmd_sign_assertion,
	  "--key FILE --audience ORIGIN [--cert FILE] [--duration SECONDS] [--at MS]",
	  "Signs an assertion {\"aud\",\"exp\"} with a user's private key and prints\n"
	  "it; with --cert, prints the backed assertion cert~assertion. Duration\n"
	  "defaults to 120 s, at most 3600.\n" },
	{ "verify-cert", kt_cmd_verify_cert,
	  "(--issuer-key FILE | --support-doc [DOMAIN=]FILE... | --fetch URL) [--at MS] CERTFILE",
	  "Verifies a certificate as a relying party would and prints its email.\n"
	  "--issuer-key trusts that key (no issuer check); --support-doc and\n"
	  "--fetch resolve the email domain's support document (following\n"
	  "delegation) and require iss to be the resolved authority. iat and exp\n"
	  "allow 30 s of clock skew. See verify-assertion for the --fetch URL\n"
	  "forms.\n"
	  "Exit 0: valid; 1: invalid (reason on stderr); 2: usage or I/O.\n" },
	{ "verify-assertion", kt_cmd_verify_assertion,
	  "--audience ORIGIN (--support-doc [DOMAIN=]FILE... | --fetch URL) "
	  "[--connect HOST:PORT] [--cafile FILE] [--timeout S] [--at MS] [--json] FILE",
	  "Verifies a backed assertion (cert~assertion) as a relying party would\n"
	  "and prints the email. The expected issuer is the email's domain, or,\n"
	  "when its support document delegates, the authority at the end of the\n"
	  "chain (at most 5 hops, no loops).\n"
	  "--audience is the relying party's origin: scheme://host[:port], or\n"
	  "host[:port] for http, a trailing / allowed, no other path. The\n"
	  "assertion's aud must name the same scheme, host and port (default\n"
	  "ports filled in, case ignored); iat and exp allow 30 s of clock skew.\n"
	  "--fetch URL: either the support document itself (a URL whose path is\n"
	  "/.well-known/browserid, e.g.\n"
	  "http://127.0.0.1:8080/.well-known/browserid?domain=example.test), or a\n"
	  "base URL (http[s]://host[:port]) to which\n"
	  "/.well-known/browserid?domain=<email domain> is appended. Either way the\n"
	  "document is taken as the email domain's. A delegation is followed with\n"
	  "the same scheme to the authority host; --connect HOST:PORT sends every\n"
	  "request there instead (keeping the Host name and TLS name). https is\n"
	  "verified against the system CAs or --cafile. Redirects are refused, the\n"
	  "body must be application/json and at most 64 KiB.\n"
	  "--support-doc FILE is the email domain's document; DOMAIN=FILE gives\n"
	  "the document of a delegated authority.\n"
	  "--at MS verifies as of that time (ms since the epoch).\n"
	  "--json prints, instead of the email or the reason, the one line that\n"
	  "POST /verify answers: {\"status\":\"okay\",\"email\",\"audience\",\n"
	  "\"expires\" (ms),\"issuer\"} or {\"status\":\"failure\",\"reason\"}, for\n"
	  "every verdict (I/O and network failures too); usage errors print none.\n"
	  "Exit 0: valid; 1: invalid (reason on stderr); 2: usage, I/O, network.\n" },
	{ "audit", kt_cmd_audit,
	  "(--state DIR | --database CONNINFO) [--email ADDR|ACCOUNT] [--since TIME]\n"
	  "                    [--limit N] [--json]\n"
	  "                    | audit prune (--state DIR | --database CONNINFO) "
	  "[--before TIME]",
	  "Prints the authority's audit trail (sign-ins, issued certificates),\n"
	  "oldest first (--limit N: the newest N); TIME is ISO-8601 UTC, epoch\n"
	  "seconds, or an age (1h, 7d). prune deletes rows older than TIME\n"
	  "(default 365d).\n" },
	{ "sessions", kt_cmd_sessions,
	  "(--state DIR | --database CONNINFO) [--email ADDR] [--json]\n"
	  "                    | sessions revoke (--state DIR | --database CONNINFO)\n"
	  "                      (--id N | --email ADDR | --all)",
	  "Lists live sessions by id (never a token); revoke ends them at once.\n" },
	{ "throttle", kt_cmd_throttle,
	  "(--state DIR | --database CONNINFO) [--json]\n"
	  "                    | throttle clear (--state DIR | --database CONNINFO)\n"
	  "                      (--account NAME | --address ADDR | --all)",
	  "Lists running sign-in counts; clear lets an account or address sign\n"
	  "in again at once.\n" },
	{ "backup", kt_cmd_backup, "--state DIR [--force] FILE",
	  "A consistent copy of the running authority's database (mode 0600).\n" },
	{ "restore", kt_cmd_restore, "--state DIR [--force] FILE",
	  "Puts a backup back while the authority is stopped.\n" },
	{ "instances", kt_cmd_instances,
	  "[--domain DOMAIN] [--cafile FILE] [--timeout S] [--json] URL URL...",
	  "Checks that several running instances of one authority publish the\n"
	  "same keys, before a rotation step (prepare, rotate, retire) proceeds\n"
	  "and after each reload. URL is an instance's base URL\n"
	  "(http[s]://host[:port]); its support document is fetched from\n"
	  "URL/.well-known/browserid (?domain=DOMAIN with --domain) as\n"
	  "verify-assertion --fetch fetches one (no redirects, application/json,\n"
	  "at most 64 KiB, --timeout S each, default 10; https verified against\n"
	  "the system CAs or --cafile).\n"
	  "Prints one line per instance: URL public-key=FP keys=FP,... (the\n"
	  "signing key's fingerprint, then every published key's, sorted, as\n"
	  "pubkey --fingerprint prints them); a line per instance that differs\n"
	  "from the first (differs: URL from FIRST: public-key FP instead of FP;\n"
	  "extra FP...; missing FP..., the parts that apply); then the verdict:\n"
	  "same, different or unreadable. --json prints instead one object per\n"
	  "instance {\"url\",\"public_key\",\"keys\"} (or {\"url\",\"error\"}) and a\n"
	  "verdict {\"verdict\",\"instances\",\"reference\",\"differ\"}.\n"
	  "Exit 0: every instance publishes the same keys and signs with the same\n"
	  "one; 1: they differ; 2: usage, or an instance could not be fetched or\n"
	  "read (never counted as the same).\n" },
	{ "inspect", kt_cmd_inspect, "FILE",
	  "Decodes a certificate, assertion or backed assertion for a human:\n"
	  "headers, pretty payloads, times in ISO-8601 UTC, key algorithm and\n"
	  "fingerprint. Verifies nothing.\n" },
};

#define KT_NCMDS (sizeof kt_cmds / sizeof kt_cmds[0])

static void
kt_main_usage(FILE *f)
{
	size_t i;

	fputs("usage: vep-keytool COMMAND [OPTIONS] (COMMAND --help for details)\n"
	    "       vep-keytool --version\n\n"
	    "Commands:\n", f);
	for (i = 0; i < KT_NCMDS; i++)
		fprintf(f, "  %-17s %s\n", kt_cmds[i].name, kt_cmds[i].usage);
	fputs("\nFiles may be '-' for stdin. Exit status: 0 ok/valid, 1 invalid (or,\n"
	    "for revoke and clear, nothing matched), 2 usage, I/O or network error.\n", f);
}

int
main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		kt_main_usage(stderr);
		return KT_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("vep-keytool %s\n", VEP_VERSION);
		return KT_EXIT_OK;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		kt_main_usage(stdout);
		return KT_EXIT_OK;
	}
	for (i = 0; i < KT_NCMDS; i++)
		if (strcmp(argv[1], kt_cmds[i].name) == 0)
			return kt_cmds[i].run(&kt_cmds[i], argc - 1, argv + 1);
	kt_err("unknown command '%s'", argv[1]);
	kt_main_usage(stderr);
	return KT_EXIT_USAGE;
}
