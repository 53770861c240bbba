/*
 * idleconns.c - opens N keep-alive connections to ADDR:PORT, sends one
 * "GET PATH" on each and reads the answer, then keeps them all open and
 * idle until its standard input closes. Prints "open N" when they are all
 * established (so the caller can measure the server then).
 *
 *   idleconns 127.0.0.1 8080 10000 /.well-known/browserid
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_in sa;
	char req[512], buf[16384];
	int n, i, ok = 0;

	if (argc != 5 || (n = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: idleconns ADDR PORT N PATH\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1)
		return 2;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", argv[4], argv[1]);
	for (i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		ssize_t got;
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			perror("idleconns: connect");
			break;
		}
		if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) ||
		    (got = read(fd, buf, sizeof(buf))) <= 0 ||
		    strncmp(buf, "HTTP/1.1 200", 12) != 0) {
			fprintf(stderr, "idleconns: no answer on connection %d\n", i);
			break;
		}
		ok++;
	}
	printf("open %d\n", ok);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return ok == n ? 0 : 1;
}
