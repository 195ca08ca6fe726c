/*
 * churn: start short programs at a steady rate, for bench/soak.sh.
 *
 *   churn RATE SECONDS PROG [PROG...]
 *
 * Starts RATE programs a second for SECONDS (0: until killed), taking the
 * PROGs in turn; each PROG is one shell-free command line split at spaces
 * ("/usr/bin/python3 -c pass").  Starts are paced on CLOCK_MONOTONIC
 * (absolute deadlines, so a slow start is made up, not lost), children
 * are reaped as they exit, and at most 64 run at once (a start past that
 * waits): a loaded machine slows the rate rather than piling up processes.
 * Prints "started N" on exit, to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNNING 64
#define MAX_ARGS 16

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int split(char *s, char **argv)
{
	int n = 0;

	for (char *tok = strtok(s, " "); tok && n < MAX_ARGS; tok = strtok(NULL, " "))
		argv[n++] = tok;
	argv[n] = NULL;
	return n;
}

int main(int argc, char **argv)
{
	static char *cmds[64][MAX_ARGS + 1];
	struct timespec next;
	long rate, secs, started = 0, running = 0, end_ns;
	int ncmd = 0, devnull;
	char *e1, *e2;

	if (argc < 4)
		return fprintf(stderr, "usage: churn RATE SECONDS PROG...\n"), 2;
	rate = strtol(argv[1], &e1, 10);
	secs = strtol(argv[2], &e2, 10);
	if (*e1 || *e2 || rate <= 0 || rate > 100000 || secs < 0)
		return fprintf(stderr, "churn: bad RATE or SECONDS\n"), 2;
	for (int i = 3; i < argc && ncmd < 64; i++)
		if (split(argv[i], cmds[ncmd]) > 0)
			ncmd++;
	if (!ncmd)
		return fprintf(stderr, "churn: no program\n"), 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	devnull = open("/dev/null", O_WRONLY);
	clock_gettime(CLOCK_MONOTONIC, &next);
	end_ns = secs ? secs * 1000000000L : -1;
	for (long i = 0; !stop && (end_ns < 0 || i * (1000000000L / rate) < end_ns); i++) {
		long step = 1000000000L / rate;
		pid_t pid;

		next.tv_nsec += step;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR && !stop)
			;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			running--;
		while (running >= MAX_RUNNING && !stop && wait(NULL) > 0)
			running--;
		pid = fork();
		if (pid == 0) {
			char **av = cmds[started % ncmd];

			if (devnull >= 0) {
				dup2(devnull, 1);
				dup2(devnull, 2);
			}
			execv(av[0], av);
			_exit(127);
		}
		if (pid > 0) {
			running++;
			started++;
		}
	}
	while (running > 0 && wait(NULL) > 0)
		running--;
	fprintf(stderr, "started %ld\n", started);
	return 0;
}
