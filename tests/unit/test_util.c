/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tap.h"
#include "cli/cmd.h"
#include "hosts.h"
#include "util.h"

static void
mark(size_t i, void *arg)
{
	int *seen = arg;

	__atomic_add_fetch(&seen[i], 1, __ATOMIC_SEQ_CST);
}

static void
parallel_for_cases(void)
{
	int seen[64] = { 0 };
	bool once = true;

	jc_parallel_for(64, mark, seen);
	for (size_t i = 0; i < 64; i++)
		once = once && seen[i] == 1;
	ok(once, "parallel_for: every index runs exactly once");
	jc_parallel_for(0, mark, seen);
	is_int(seen[0], 1, "parallel_for: no job for n = 0");
}

static void
atomic_write_cases(void)
{
	char dir[] = "/tmp/jc-util-XXXXXX", *path, *back = NULL, *tmpglob;
	struct jc_err err = { 0 };
	struct stat st;
	size_t len = 0;
	DIR *d;
	struct dirent *de;
	int left = 0;

	if (mkdtemp(dir) == NULL) {
		ok(false, "atomic write: temporary folder");
		return;
	}
	path = xasprintf("%s/state.json", dir);
	ok(jc_write_atomic(path, "one\n", 4, 0600, &err) == 0, "atomic write: new file");
	ok(jc_write_atomic(path, "two\n", 4, 0600, &err) == 0, "atomic write: replace");
	ok(jc_read_file(path, 100, &back, &len, &err) == 0 && len == 4 &&
	    memcmp(back, "two\n", 4) == 0, "atomic write: the new content, whole");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "atomic write: mode kept");
	free(back);
	tmpglob = xasprintf("%s/nodir/x.json", dir);
	ok(jc_write_atomic(tmpglob, "x", 1, 0600, &err) == -ENOENT &&
	    strstr(err.msg, "nodir/x.json") != NULL, "atomic write: error names the file");
	free(tmpglob);
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strstr(de->d_name, ".tmp.") != NULL)
				left++;
		closedir(d);
	}
	is_int(left, 0, "atomic write: no temporary left behind");
	{
		size_t k = 0;

		/* "." NAME ".tmp.tt" and 14 hex digits, as jc_write_atomic names them */
		ok(jc_write_atomic_temp("..jcsync-manifest.tmp.tt0123456789abcd", &k) && k == 16,
		    "atomic temporary: recognized, NAME of 16 bytes");
		ok(jc_write_atomic_temp(".a.tmp.ttffffffffffffff", &k) && k == 1,
		    "atomic temporary: NAME of 1 byte");
		ok(!jc_write_atomic_temp(".a.tmp.tt0123456789abc", &k) &&
		    !jc_write_atomic_temp(".a.tmp.tt0123456789abcg", &k) &&
		    !jc_write_atomic_temp("a.tmp.tt0123456789abcd", &k) &&
		    !jc_write_atomic_temp(".tmp.tt0123456789abcd", &k) &&
		    !jc_write_atomic_temp(".a.tmp.xx0123456789abcd", &k) && !jc_write_atomic_temp("", &k),
		    "atomic temporary: a short token, a bad digit, no dot, no NAME, no tt, empty: not one");
	}
	unlink(path);
	rmdir(dir);
	free(path);
}

static char *
slurp(const char *path)
{
	char *b = NULL;
	struct jc_err e = { 0 };

	if (jc_read_file(path, 1 << 20, &b, NULL, &e) != 0)
		return NULL;
	return b;
}

/* Writers never follow a planted link nor keep a planted file (issue 21, case 1). */
static void
safe_write_cases(void)
{
	char dir[] = "/tmp/jc-util-XXXXXX", *path, *victim, *plant, *link, *got;
	struct jc_err err = { 0 };
	struct stat st;
	mode_t um = umask(022);
	int rc;

	umask(um);
	if (mkdtemp(dir) == NULL) {
		ok(false, "safe write: temporary folder");
		return;
	}
	path = xasprintf("%s/cluster.json", dir);
	victim = xasprintf("%s/victim", dir);
	plant = xasprintf("%s/cluster.json.tmp.%ld", dir, (long)getpid());
	link = xasprintf("%s/link.json", dir);
	jc_write_atomic(victim, "keep\n", 5, 0600, &err);
	/* the old predictable temporary name, planted as a link to the victim */
	ok(symlink(victim, plant) == 0, "safe write: link planted at PATH.tmp.PID");
	rc = jc_write_atomic(path, "new\n", 4, 0644, &err);
	got = slurp(victim);
	ok(rc == 0 && got != NULL && strcmp(got, "keep\n") == 0,
	    "safe write: a link at the old temporary name is not written through");
	free(got);
	got = slurp(path);
	is_str(got, "new\n", "safe write: the target has the new content");
	free(got);
	ok(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_mode & 0777) == (0644 & ~um),
	    "safe write: the target is a regular file of ours, mode 0644 less the umask");
	/* a target that is a link is refused, and what it points to is kept */
	symlink(victim, link);
	rc = jc_write_atomic(link, "evil\n", 5, 0600, &err);
	got = slurp(victim);
	ok(rc == -ELOOP && strstr(err.msg, "link.json") != NULL && strstr(err.msg, "link") != NULL,
	    "safe write: a target that is a symbolic link is refused (%s)", err.msg);
	ok(got != NULL && strcmp(got, "keep\n") == 0 && lstat(link, &st) == 0 &&
	    S_ISLNK(st.st_mode), "safe write: the link and its target are left as they were");
	free(got);
	/* a file another user created at the target: replaced by a file of ours */
	if (geteuid() == 0) {
		unlink(path);
		jc_write_atomic(path, "theirs\n", 7, 0666, &err);
		chown(path, 65534, 65534);
		chmod(path, 0666);
		rc = jc_write_atomic(path, "ours\n", 5, 0600, &err);
		ok(rc == 0 && stat(path, &st) == 0 && st.st_uid == 0 &&
		    (st.st_mode & 0777) == 0600,
		    "safe write: a file another user pre-created is replaced, owner us, mode 0600");
	} else {
		ok(true, "# SKIP pre-created file of another user needs root to chown");
	}
	/* a FIFO is refused without blocking (alarm is a hang guard, not a timing) */
	{
		char *fifo = xasprintf("%s/manifest.json", dir), *b = NULL;

		mkfifo(fifo, 0600);
		alarm(20);
		rc = jc_read_file(fifo, 100, &b, NULL, &err);
		alarm(0);
		ok(rc == 0 && b != NULL && *b == '\0',
		    "read: a FIFO without a writer reads as empty, without waiting");
		free(b);
		b = NULL;
		rc = jc_read_file("/dev/null", 100, &b, NULL, &err);
		ok(rc == -EINVAL && b == NULL && strstr(err.msg, "not a regular file") != NULL,
		    "read: a device is refused");
		rc = jc_write_atomic(fifo, "x", 1, 0600, &err);
		ok(rc == -EINVAL, "safe write: a FIFO target is refused");
		unlink(fifo);
		free(fifo);
	}
	/* the at-variant never follows a link */
	{
		int dfd = open(dir, O_RDONLY | O_DIRECTORY);
		char *b = NULL, *fifo_at = xasprintf("%s/f.fifo", dir);

		rc = jc_read_file_at(dfd, "link.json", "link.json", 100, &b, NULL, &err);
		ok(rc == -ELOOP && b == NULL, "read at: a link is not followed");
		mkfifo(fifo_at, 0600);
		alarm(20);
		rc = jc_read_file_at(dfd, "f.fifo", "f.fifo", 100, &b, NULL, &err);
		alarm(0);
		ok(rc == -EINVAL && b == NULL, "read at: a FIFO is refused without blocking");
		unlink(fifo_at);
		free(fifo_at);
		close(dfd);
	}
	/* private folders: created 0700; refused when others may write or own them */
	{
		char *sd = xasprintf("%s/state/a/b", dir), *open_dir = xasprintf("%s/open", dir);

		rc = jc_private_dir(sd, true, &err);
		ok(rc == 0 && stat(sd, &st) == 0 && (st.st_mode & 0777) == 0700,
		    "private folder: created with its parents, mode 0700");
		mkdir(open_dir, 0700);
		chmod(open_dir, 0777);
		rc = jc_private_dir(open_dir, true, &err);
		ok(rc == -EPERM && strstr(err.msg, "writable") != NULL,
		    "private folder: a world-writable one is refused (%s)", err.msg);
		chmod(open_dir, 0720);
		ok(jc_private_dir(open_dir, false, &err) == -EPERM,
		    "private folder: a group-writable one is refused");
		chmod(open_dir, 0700);
		if (geteuid() == 0) {
			chown(open_dir, 65534, 65534);
			rc = jc_private_dir(open_dir, false, &err);
			ok(rc == -EPERM && strstr(err.msg, "another user") != NULL,
			    "private folder: one another user owns is refused (%s)", err.msg);
		} else {
			ok(true, "# SKIP a folder of another user needs root to chown");
		}
		rmdir(open_dir);
		rmdir(sd);
		free(sd);
		sd = xasprintf("%s/state/a", dir);
		rmdir(sd);
		free(sd);
		sd = xasprintf("%s/state", dir);
		rmdir(sd);
		free(sd);
		free(open_dir);
	}
	unlink(path);
	unlink(victim);
	unlink(plant);
	unlink(link);
	rmdir(dir);
	free(path);
	free(victim);
	free(plant);
	free(link);
}

/* Remote text made printable (issue 21, case 6). */
static void
printable_cases(void)
{
	char *p;
	json_t *rep;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	p = jc_printable("Mac\033]0;x\007 Studio\n", 0);
	is_str(p, "Mac\\x1b]0;x\\x07 Studio\\x0a", "printable: C0 controls escaped");
	free(p);
	p = jc_printable("a\302\233b caf\303\251 \377", 0);
	is_str(p, "a\\u009bb caf\303\251 \\xff", "printable: C1 escaped, UTF-8 kept, bad bytes escaped");
	free(p);
	{
		char h[65], *mil = xmalloc(1000000);

		jc_sha256_hex("abc", 3, h);
		is_str(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		    "sha256: FIPS 180-4 example \"abc\"");
		jc_sha256_hex("", 0, h);
		is_str(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		    "sha256: empty");
		jc_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h);
		is_str(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
		    "sha256: two-block example (56 bytes)");
		memset(mil, 'a', 1000000);
		jc_sha256_hex(mil, 1000000, h);
		is_str(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
		    "sha256: a million 'a'");
		free(mil);
	}
	p = jc_printable("abc\342\200\256gpj.exe \342\201\246x\342\200\224", 0);
	is_str(p, "abc\\u202egpj.exe \\u2066x\342\200\224",
	    "printable: direction overrides escaped, an em dash kept");
	free(p);
	p = jc_printable(NULL, 0);
	is_str(p, "?", "printable: NULL reads as ?");
	free(p);
	p = jc_printable("abcdef", 3);
	is_str(p, "abc...", "printable: cut after max characters");
	free(p);
	/* a verify report with names from the hosts and missing fields */
	rep = json_pack("{s:[s,s], s:[{s:i, s:i, s:s}, {s:i, s:i, s:s, s:s}], s:[s, i], s:b}",
	    "hosts", "mac1", "mac\033[2J2", "links", "a", 0, "b", 1, "device_a", "rdma\033]0;x\007",
	    "a", 1, "b", 0, "status", "down", "error", "gone\033[31m", "failures",
	    "rank 1 \033[5mfailed", 7, "ok", 0);
	mem = open_memstream(&text, &len);
	verify_print(mem, rep);
	fclose(mem);
	ok(text != NULL && strchr(text, '\033') == NULL && strchr(text, '\007') == NULL &&
	    strstr(text, "rdma\\x1b]0;x\\x07") != NULL && strstr(text, "summary: 2 hosts") != NULL,
	    "verify report: host text escaped, missing fields and a non-string failure survive");
	free(text);
	json_decref(rep);
}

int
main(void)
{
	struct jc_host *h = NULL;
	struct jc_err err = { 0 };
	size_t n = 0;

	ok(jc_plain_word("mac-1.local"), "plain host name");
	ok(!jc_plain_word("a b"), "space rejected");
	ok(!jc_plain_word("a;rm"), "semicolon rejected");
	ok(!jc_plain_word("$(x)"), "command substitution rejected");
	ok(!jc_plain_word("-oProxyCommand=x"), "leading dash rejected");
	ok(!jc_plain_word(""), "empty rejected");
	ok(jc_iface_name_ok("en2") && jc_iface_name_ok("rdma_en10"), "interface names");
	ok(!jc_iface_name_ok("en2 ") && !jc_iface_name_ok("en`x`"), "bad interface names");
	ok(jc_service_name_ok("Thunderbolt Bridge") && jc_service_name_ok("jaccl-config Thunderbolt 1") &&
	    jc_service_name_ok("USB 10_100_1000 LAN (2)") && jc_service_name_ok("Wi-Fi"),
	    "service names");
	ok(!jc_service_name_ok("") && !jc_service_name_ok(" Wi-Fi") && !jc_service_name_ok("Wi-Fi ") &&
	    !jc_service_name_ok("-x") && !jc_service_name_ok("a'b") && !jc_service_name_ok("a;b") &&
	    !jc_service_name_ok("a$(b)") && !jc_service_name_ok("a\nb") &&
	    !jc_service_name_ok("USB 10/100/1000 LAN") &&
	    !jc_service_name_ok("0123456789012345678901234567890123456789012345678901234567890123"),
	    "bad service names (quotes, shell syntax, '/', 64 characters)");
	{
		struct jc_buf b = { 0 };

		buf_puts(&b, "");
		jc_shell_word(&b, "-setmanual");
		buf_puts(&b, "|");
		jc_shell_word(&b, "Thunderbolt Bridge");
		buf_puts(&b, "|");
		jc_shell_word(&b, "it's");
		buf_puts(&b, "|");
		jc_shell_word(&b, "");
		is_str(b.data, "-setmanual|'Thunderbolt Bridge'|'it'\\''s'|''", "shell words");
		buf_free(&b);
	}
	ok(jc_ipv4_ok("192.168.0.1") && !jc_ipv4_ok("192.168.0.256") &&
	    !jc_ipv4_ok("1.2.3") && !jc_ipv4_ok("1.2.3.4.5"), "IPv4 literals");
	ok(jc_ipv4_prefix_ok("192.168.0.1/30", true) && jc_ipv4_prefix_ok("10.0.0.0/0", true) &&
	    jc_ipv4_prefix_ok("192.168.0.1", false), "IPv4 prefixes");
	ok(!jc_ipv4_prefix_ok("192.168.0.1", true) && !jc_ipv4_prefix_ok("1.2.3.4/33", false) &&
	    !jc_ipv4_prefix_ok("1.2.3.4/", false) && !jc_ipv4_prefix_ok("1.2.3.256/8", false) &&
	    !jc_ipv4_prefix_ok("1.2.3.4/8x", true), "bad IPv4 prefixes");

	ok(hosts_from_list("a,root@b:2222,10.0.0.1", &h, &n, &err) == 0 && n == 3,
	    "three hosts parsed");
	is_str(h[1].name, "b", "name without user and port");
	is_str(h[1].user, "root", "user");
	is_int(h[1].port, 2222, "port");
	is_str(h[2].name, "10.0.0.1", "IP host");
	hosts_free(h, n);
	ok(hosts_from_list("a,,b", &h, &n, &err) < 0, "empty item fails");
	is_str(err.msg, "Hostname cannot be empty", "mlx's message");
	ok(hosts_from_list("a,b;reboot", &h, &n, &err) < 0, "shell syntax in host fails");
	ok(hosts_is_ip_literal("fe80::1") && !hosts_is_ip_literal("mac1"), "IP literals");
	{
		struct jc_host hx = { 0 };

		ok(hosts_parse_target("me@-oBatchMode", &hx, &err) != 0 &&
		    hosts_parse_target("-oProxyCommand=x", &hx, &err) != 0,
		    "a host part starting with '-', after '@' or not: refused");
		jc_host_clear(&hx);
		ok(hosts_parse_target("me@mac-1", &hx, &err) == 0, "a '-' inside the host: fine");
		jc_host_clear(&hx);
	}
	ok(!jc_ipv4_ok("010.0.0.1") && !jc_ipv4_ok("10.00.0.1") && !jc_ipv4_ok("10.0.0.01"),
	    "IPv4: a leading zero (octal to other tools) refused");
	ok(jc_ipv4_ok("0.0.0.0") && jc_ipv4_ok("10.0.0.100") && jc_ipv4_ok("192.168.0.0"),
	    "IPv4: zero octets and a 0 inside a number: fine");
	atomic_write_cases();
	safe_write_cases();
	printable_cases();
	parallel_for_cases();
	return done_testing();
}
