/* SPDX-License-Identifier: MIT */
/*
 * The hint for "No route to host" from a macOS client (tr_lan_hint): only
 * on macOS 15 and later (Darwin 24 and later), only for an address of the
 * local network, naming the app to allow in Local Network, and none for
 * Terminal, which needs no permission.
 */
#include "config.h"

#include <string.h>

#include "../tap.h"
#include "transport.h"

static const char *
hint(const char *addr, const char *sys, const char *rel, const char *term)
{
	static char buf[512];

	return tr_lan_hint(addr, sys, rel, term, buf, sizeof(buf));
}

static bool
has(const char *h, const char *s)
{
	return h != NULL && strstr(h, s) != NULL;
}

int
main(void)
{
	const char *h;

	h = hint("192.168.1.5", "Darwin", "24.1.0", "iTerm.app");
	ok(has(h, "turn iTerm on in System Settings > Privacy & Security > Local Network"),
	    "macOS 15, iTerm, a 192.168 address: iTerm named: %s", h ? h : "(none)");
	ok(has(hint("10.0.0.2", "Darwin", "25.2.0", "ghostty"), "turn Ghostty on"),
	    "macOS 26, Ghostty, 10/8: Ghostty named");
	ok(has(hint("172.31.255.1", "Darwin", "24.0.0", "vscode"), "turn Visual Studio Code on"),
	    "VS Code's terminal, 172.16/12: VS Code named");
	h = hint("169.254.3.4", "Darwin", "24.6.0", NULL);
	ok(has(h, "iTerm, Ghostty, Visual Studio Code") && has(h, "Local Network"),
	    "no TERM_PROGRAM, link-local: the usual apps named");
	ok(has(hint("192.168.0.9", "Darwin", "24.1.0", "tmux"), "the app this runs in"),
	    "an unknown TERM_PROGRAM (tmux): the app this runs in");
	ok(hint("fe80::1", "Darwin", "24.1.0", "iTerm.app") != NULL &&
	    hint("fd12:3456::1", "Darwin", "24.1.0", "iTerm.app") != NULL,
	    "IPv6 link-local and unique local: a hint");
	ok(hint("192.168.1.5", "Darwin", "24.1.0", "Apple_Terminal") == NULL,
	    "Terminal needs no permission: no hint");
	ok(hint("192.168.1.5", "Darwin", "23.6.0", "iTerm.app") == NULL,
	    "macOS 14 (Darwin 23) has no Local Network privacy: no hint");
	ok(hint("192.168.1.5", "Linux", "6.1.0-18-amd64", "iTerm.app") == NULL,
	    "a Linux client: no hint");
	ok(hint("8.8.8.8", "Darwin", "24.1.0", "iTerm.app") == NULL &&
	    hint("172.32.0.1", "Darwin", "24.1.0", "iTerm.app") == NULL &&
	    hint("2001:db8::1", "Darwin", "24.1.0", "iTerm.app") == NULL,
	    "addresses outside the local network (8.8.8.8, 172.32.0.1, 2001:db8::1): no hint");
	ok(hint("mac1.local", "Darwin", "24.1.0", "iTerm.app") == NULL &&
	    hint(NULL, "Darwin", "24.1.0", NULL) == NULL &&
	    hint("192.168.1.5", "Darwin", "x", NULL) == NULL,
	    "no address, a name, an unreadable release: no hint");
	return done_testing();
}
