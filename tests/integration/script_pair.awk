# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Pair two sorted outputs of script_samples.awk sample by sample: the
# files' (FILE1, read first) and the merge's (stdin).  Every sample must be
# in both, as often, at the same addresses; each frame's name the same,
# but for one the file left unnamed ([unknown]) and the merge names: a
# frame written before its file answered (reason 8) takes the name another
# file holds (docs/FORMAT.md), so the merge may know more than one file.
# Prints "ok N NAMED" (NAMED: frames only the merge named), else up to 3
# differences and "differ N".
BEGIN { FS = "\t" }
NR == FNR { fk[++nf] = $1; fn[nf] = $2; next }
{ mk[++nm] = $1; mn[nm] = $2 }
function bad(what) { if (++nbad <= 3) print what; }
END {
	i = 1; j = 1
	while (i <= nf || j <= nm) {
		if (j > nm || (i <= nf && fk[i] < mk[j])) { bad("only in the files: " fk[i] " " fn[i]); i++; continue }
		if (i > nf || mk[j] < fk[i]) { bad("only in the merge: " mk[j] " " mn[j]); j++; continue }
		n = split(fn[i], a, "|"); split(mn[j], b, "|")
		for (k = 2; k <= n; k++)
			if (a[k] != b[k]) {
				if (a[k] == "[unknown]") named++
				else bad("named otherwise: " fk[i] ": frame " k - 1 " '" a[k] "' in its file, '" b[k] "' merged")
			}
		i++; j++
	}
	if (nbad) print "differ " nbad
	else printf "ok %d %d\n", nf, named + 0
}
