/*
 * core/syslog_out.h - lines to a syslog socket (RFC 3164 as the local
 * daemons read it: "<PRI>Mmm dd hh:mm:ss TAG[PID]: message"), for the access
 * log when `access_log = syslog`.
 *
 * Not syslog(3): that keeps process-wide state (openlog), always uses
 * /dev/log, and may block. This writer owns one non-blocking datagram
 * socket and sends each line to the configured path (syslog_socket): a line
 * the daemon cannot take at once (gone, restarting, full) is dropped and
 * counted, never waited for, so a stalled log daemon cannot stall requests.
 * Lines are cut to SYSLOG_OUT_LINE_MAX bytes.
 */
#ifndef AUTHORITY_CORE_SYSLOG_OUT_H
#define AUTHORITY_CORE_SYSLOG_OUT_H

#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Longest line sent (bytes); RFC 3164 relays keep 1024, local daemons more. */
#define SYSLOG_OUT_LINE_MAX 2048

struct syslog_out {
	int fd;                   /* owned datagram socket, -1 when closed */
	struct sockaddr_un addr;  /* the daemon's socket */
	socklen_t addrlen;
	int facility;             /* LOG_DAEMON, LOG_LOCAL0... (syslog.h values) */
	atomic_ulong dropped;     /* lines the daemon did not take */
};

/* Opens a writer to the socket at path (an absolute path of at most
 * sizeof(sun_path) - 1 bytes) for facility. Returns 0, VEP_ERR_ARG or
 * VEP_ERR_IO. Nothing is sent yet: the daemon need not be up. */
int syslog_out_open(struct syslog_out *s, const char *path, int facility);

/* Sends one line at severity (LOG_INFO, LOG_ERR...) tagged "vep-authority".
 * Safe from several threads at once (one sendto per line). */
void syslog_out_send(struct syslog_out *s, int severity, const char *line);

/* Closes the socket. Safe on a closed one. */
void syslog_out_close(struct syslog_out *s);

/* Looks up a facility by name ("daemon", "local0".."local7", "user",
 * "auth", "authpriv"). Returns 0 with its value, or VEP_ERR_INVALID. */
int syslog_facility_parse(const char *name, int *out);

#endif
