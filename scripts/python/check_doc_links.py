#!/usr/bin/env python3
"""Every link into the repository's Markdown resolves: the file exists and, with `#anchor`, one of
its headings has that anchor (GitHub's rule: lower case, punctuation but `-` and `_` dropped, spaces
to `-`, repeats numbered `-1`, `-2`).

Checked: Markdown links `[text](path)` and `[text](#anchor)` in tracked .md files, and `file.md#anchor`
written anywhere in tracked sources (Swift, Python, JSON, HTML, JavaScript), where docs point readers.
External links (a scheme) are not followed: CI has no network to check them with.

Why in the test command: headings are renamed as the docs grow, and a reader sent to an anchor that
no longer exists lands at the top of a 1,000-line page with no hint where to look.

Usage: check_doc_links.py [REPOSITORY]   (default: the current directory; exit 1 on a broken link)
"""
import os
import re
import subprocess
import sys


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.replace("`", "")).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors_of(path):
    found, seen, fenced = set(), {}, False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("```"):
                fenced = not fenced
            match = None if fenced else re.match(r"^#{1,6}\s+(.*)", line)
            if match:
                base = slug(match.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    os.chdir(root)
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    tracked = set(files)
    anchors = {path: anchors_of(path) for path in files if path.endswith(".md") and os.path.exists(path)}
    broken = []

    def check(source, target, anchor):
        if target:
            resolved = os.path.normpath(os.path.join(os.path.dirname(source), target))
            if resolved not in tracked and not os.path.isdir(resolved):
                broken.append(f"{source}: {target} does not exist")
                return
        else:
            resolved = source
        if anchor and resolved in anchors and anchor not in anchors[resolved]:
            broken.append(f"{source}: {target}#{anchor}: no such heading")

    for path in files:
        if not path.endswith((".md", ".swift", ".py", ".json", ".html", ".js")) or not os.path.exists(path):
            continue
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue  # its own docstring's example
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        if path.endswith(".md"):
            for match in re.finditer(r"\]\(([^)\s]*)\)", text):
                link = match.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", link) or link.startswith("<"):
                    continue  # a URL (https:, mailto:): not followed
                target, _, anchor = link.partition("#")
                check(path, target, anchor)
        else:
            # Sources name docs from wherever they are; resolve against the repository and docs/.
            for match in re.finditer(r"([\w./-]*\.md)#([\w-]+)", text):
                name, anchor = match.group(1), match.group(2)
                candidates = [os.path.normpath(name), os.path.normpath(os.path.join("docs", os.path.basename(name)))]
                resolved = next((c for c in candidates if c in anchors), None)
                if resolved is None:
                    broken.append(f"{path}: {name} does not exist")
                elif anchor not in anchors[resolved]:
                    broken.append(f"{path}: {name}#{anchor}: no such heading")
    for line in broken:
        print(f"check_doc_links: {line}")
    print(f"check_doc_links: {len(broken)} broken link(s) in {len(anchors)} Markdown files")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
