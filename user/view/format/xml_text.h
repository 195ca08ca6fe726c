/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xml_text: names from binaries we do not trust, made text an XML file
 * can hold.  Each is made valid UTF-8 of characters XML 1.0 allows
 * (control bytes become '?', invalid sequences U+FFFD) before it is
 * kept, and escaped when written, so nothing in a name can end an
 * element, an attribute or a script.  No libbpf here.
 */
#ifndef BPFSYM_XML_TEXT_H
#define BPFSYM_XML_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report/report_fmt.h"

/*
 * Append @n bytes of @s to @b as clean UTF-8, then "..." when @cut (@s is
 * the start of a longer name, maybe cut inside a character), then a NUL.
 * 0 or -ENOMEM.
 */
int xml_text__clean(struct rpt_buf *b, const char *s, size_t n, bool cut);

/* Write the clean text @s (xml_text__clean()'s) to @out, XML-escaped. */
void xml_text__put(FILE *out, const char *s);

#endif /* BPFSYM_XML_TEXT_H */
