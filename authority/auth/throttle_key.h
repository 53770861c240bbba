/*
 * auth/throttle_key.h - the names sign-in attempts are counted under
 * (store/throttle.h), so that one account or one client counts once however
 * it is spelled.
 *
 * An account counts as the PAM backend compares it: byte for byte, or with
 * ASCII letters folded to lower case for backends that ignore case (LDAP,
 * SSSD, Active Directory; configuration key pam_user_case). A client address
 * counts as itself for IPv4 (an IPv4-mapped IPv6 address is its IPv4 form)
 * and as its /64 for IPv6, since one IPv6 subscriber holds a whole /64 and
 * could otherwise change address for every guess.
 *
 * Pure functions: no state, no allocation.
 */
#ifndef AUTHORITY_AUTH_THROTTLE_KEY_H
#define AUTHORITY_AUTH_THROTTLE_KEY_H

#include <stddef.h>

/* Room for any address key: an IPv6 prefix in text plus "/64". */
#define THROTTLE_KEY_ADDR_BUFSZ 64

/* Writes account's counting form to out (outlen bytes with the NUL).
 * Returns 0, VEP_ERR_ARG or VEP_ERR_TOOBIG (out is then ""). */
int throttle_key_account(const char *account, int fold_case, char *out, size_t outlen);

/* Writes the counting form of a client address in text (as edge/req.h keeps it)
 * to out. Text that is no IP address ("unknown") is kept as it is. Returns
 * 0, VEP_ERR_ARG or VEP_ERR_TOOBIG (out is then ""). */
int throttle_key_addr(const char *addr, char *out, size_t outlen);

#endif
