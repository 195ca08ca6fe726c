// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xml_text: names from binaries we do not trust, made text an SVG file can
 * hold (xml_text.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "view/format/xml_text.h"

/*
 * The length of the UTF-8 sequence at @p (@n bytes left) when it encodes
 * a character XML 1.0 allows (shortest form, no surrogate, not U+FFFE or
 * U+FFFF, no C0/C1 control); 0 otherwise.
 */
static size_t xml_char(const unsigned char *p, size_t n)
{
	uint32_t cp, min;
	size_t len, i;

	if (p[0] < 0x80)
		return p[0] >= 0x20 && p[0] != 0x7f;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
	    cp == 0xffff || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

int xml_text__clean(struct rpt_buf *b, const char *s, size_t n, bool cut)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	int err = 0;

	while (i < n && !err) {
		k = xml_char(p + i, n - i);
		if (k) {
			err = rpt_buf__put(b, p + i, k);
			i += k;
		} else if (p[i] < 0x80 || (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)) {
			/* An ASCII or C1 control: one visible character, as the table prints. */
			err = rpt_buf__put(b, "?", 1);
			i += p[i] < 0x80 ? 1 : 2;
		} else if (cut && n - i < 4 && p[i] >= 0xc2) {
			break;	/* the start of a character the cut split: drop it */
		} else {
			err = rpt_buf__put(b, repl, sizeof(repl) - 1);
			i++;
		}
	}
	if (cut)
		err = err ?: rpt_buf__put(b, "...", 3);
	return err ?: rpt_buf__put(b, "", 1);
}

/* Only five characters need escaping: the clean text has no controls left. */
void xml_text__put(FILE *out, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		const char *e;

		switch (*s) {
		case '&': e = "&amp;"; break;
		case '<': e = "&lt;"; break;
		case '>': e = "&gt;"; break;
		case '"': e = "&quot;"; break;
		case '\'': e = "&#39;"; break;
		default: continue;
		}
		fwrite(run, 1, (size_t)(s - run), out);
		fputs(e, out);
		run = s + 1;
	}
	fwrite(run, 1, (size_t)(s - run), out);
}

