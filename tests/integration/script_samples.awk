# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `bpfsym report --perf-script` text -> one line per sample:
#   HEADER|IP (MODULE)|IP (MODULE)...<TAB>|NAME|NAME...
# The key (header: comm, tid, CPU, time, period; each frame's address and
# module) says which sample it is and where it was; the names after the tab
# are what the report made of it.  Sorted, two readings of one recording
# pair up sample by sample (test_rotate: the files one by one, and merged).
function flush() { if (hdr != "") print hdr key "\t" names; hdr = ""; key = ""; names = "" }
/^[^ \t]/ { flush(); hdr = $0; next }
/^[ \t]*$/ { flush(); next }
{
	nm = $0
	sub(/^[ \t]*[^ \t]+[ \t]+/, "", nm)
	sub(/[ \t]+\([^()]*\)$/, "", nm)
	key = key "|" $1 " " $NF
	names = names "|" nm
}
END { flush() }
