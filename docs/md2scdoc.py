#!/usr/bin/env python3
"""md2scdoc - a man page (scdoc source) from the project's Markdown, so the
man pages say what README.md and authority/CONFIG.md say and cannot drift
from them.

    md2scdoc.py OUT.scd NAME SECTION "one-line description" SYNOPSIS-FILE MD[:HEADING...]...

Each MD argument is a Markdown file, optionally followed by the headings
(## or ###, text exactly as written) whose sections to take; without
headings the whole file is taken (its title line dropped). SYNOPSIS-FILE
holds the SYNOPSIS lines (scdoc text). Only the Markdown this project
writes is understood: headings, paragraphs, '-' lists, fenced and
indented code blocks, tables (made into lists), `code`, **bold** and
[links](target). Anything else is copied as text, escaped for scdoc.
"""

import re
import sys


def escape(text):
    # scdoc formats *bold* and _underline_; a backslash escapes both.
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")


def inline(text):
    """`code` becomes bold, **x** bold, [a](b) 'a (b)'; the rest escaped."""
    out = []
    pos = 0
    for m in re.finditer(r"`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)]+)\)", text):
        out.append(escape(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append("*" + escape(m.group(1)) + "*")
        elif m.group(2) is not None:
            out.append("*" + escape(m.group(2)) + "*")
        else:
            label, target = m.group(3), m.group(4)
            out.append(inline(label) if label.strip("`") == target or target.startswith("#")
                       else inline(label) + " (" + escape(target) + ")")
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def sections(lines, wanted):
    """The lines under the wanted headings (each up to the next heading of
    the same or a higher level); every line when wanted is empty."""
    if not wanted:
        start = 1 if lines and lines[0].startswith("# ") else 0
        return lines[start:]
    out, level, missing = [], None, set(wanted)
    for ln in lines:
        m = re.match(r"^(#{1,4}) (.*)$", ln)
        if m:
            if level is not None and len(m.group(1)) <= level:
                level = None
            if m.group(2).strip() in wanted and level is None:
                level = len(m.group(1))
                missing.discard(m.group(2).strip())
        if level is not None:
            out.append(ln)
    if missing:
        raise SystemExit("md2scdoc: no heading %s" % ", ".join(sorted(missing)))
    return out


def table_rows(block):
    rows = []
    for ln in block:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if all(re.match(r"^:?-+:?$", c) for c in cells):
            continue
        rows.append(cells)
    return rows


def convert(lines):
    out = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^(#{1,4}) (.*)$", ln)
        if m:
            # ## becomes a section, deeper headings subsections.
            title = m.group(2).strip()
            if len(m.group(1)) <= 2:
                out += ["", "# " + escape(title.upper()), ""]
            else:
                out += ["", "## " + inline(title), ""]
            i += 1
        elif ln.startswith("```"):
            i += 1
            block = []
            while i < len(lines) and not lines[i].startswith("```"):
                block.append(lines[i])
                i += 1
            i += 1
            out += ["```"] + block + ["```"]
        elif ln.startswith("    ") and (not out or out[-1] == ""):
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or lines[i] == ""):
                block.append(lines[i][4:])
                i += 1
            while block and block[-1] == "":
                block.pop()
            out += ["```"] + block + ["```", ""]
        elif ln.lstrip().startswith("|"):
            block = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                block.append(lines[i])
                i += 1
            rows = table_rows(block)
            head, body = rows[0], rows[1:]
            for r in body:
                text = "; ".join("%s: %s" % (inline(h), inline(c))
                                 for h, c in zip(head[1:], r[1:]))
                out.append("- " + inline(r[0]) + (" - " + text if text else ""))
            out.append("")
        elif re.match(r"^\s*([-*]|\d+\.) ", ln):
            # A list item and its continuation lines, joined.
            m = re.match(r"^(\s*)([-*]|\d+\.) (.*)$", ln)
            item = [m.group(3)]
            i += 1
            while i < len(lines) and lines[i].strip() and \
                    not re.match(r"^\s*([-*]|\d+\.) ", lines[i]) and lines[i].startswith("  "):
                item.append(lines[i].strip())
                i += 1
            bullet = "-" if m.group(2) in "-*" else "."
            out.append(bullet + " " + inline(" ".join(item)))
            if i < len(lines) and not lines[i].strip():
                out.append("")
        elif not ln.strip():
            if out and out[-1] != "":
                out.append("")
            i += 1
        else:
            para = []
            while i < len(lines) and lines[i].strip() \
                    and not lines[i].lstrip().startswith(("#", "|", "```")) \
                    and not re.match(r"^\s*([-*]|\d+\.) ", lines[i]):
                para.append(lines[i].strip())
                i += 1
            out.append(inline(" ".join(para)))
    return out


def main(argv):
    if len(argv) < 7:
        raise SystemExit(__doc__)
    out_path, name, section, desc, synopsis = argv[1:6]
    body = []
    for spec in argv[6:]:
        path, *wanted = spec.split(":")
        with open(path, encoding="utf-8") as f:
            body += convert(sections(f.read().splitlines(), wanted))
        body.append("")
    with open(synopsis, encoding="utf-8") as f:
        syn = f.read().strip("\n")
    text = ["%s(%s)" % (name, section), "", "# NAME", "", "%s - %s" % (escape(name), desc), "",
            "# SYNOPSIS", "", syn, ""] + body
    # scdoc wants no run of blank lines and no trailing blanks.
    clean = []
    for ln in text:
        ln = ln.rstrip()
        if ln == "" and clean and clean[-1] == "":
            continue
        clean.append(ln)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(clean).strip("\n") + "\n")


if __name__ == "__main__":
    main(sys.argv)
