#!/usr/bin/env python3
"""Checks that libnnrt's layers are one-way (src/README.md), beyond what their include roots enforce.

Arguments: the source root, then each layer's static library in the order of the layers
(libnnrt_core.a first). Three checks:
  - sources: every #include of a layer's header names that layer or one before it, and none climbs
    out of its folder with "../" (which the include roots cannot stop);
  - plugins: no #include of a plugin's climbs out of its folder with "../" either (the build gives
    plugins include/ and their own folder only, so that "core/error.h" does not resolve there);
  - symbols: no layer's library refers to a symbol that only a later layer's library defines (as a
    hand-written declaration of a higher layer's function would).
Prints each violation and exits 1, or prints what it checked and exits 0.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_name(archive):
    match = re.fullmatch(r'libnnrt_(\w+)\.a', os.path.basename(archive))
    if not match:
        sys.exit(f'check_layers: expected a layer library libnnrt_<layer>.a, got {archive}')
    return match.group(1)


def source_violations(src, layers):
    problems, count = [], 0
    for rank, layer in enumerate(layers):
        for folder, _, files in os.walk(os.path.join(src, layer)):
            for name in files:
                if not name.endswith(('.h', '.cpp')):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding='utf-8') as f:
                    text = f.read()
                for target in INCLUDE.findall(text):
                    count += 1
                    where = os.path.relpath(path, os.path.dirname(src))
                    if '..' in target.split('/'):
                        problems.append(f'{where}: #include "{target}" climbs out of its folder')
                        continue
                    first = target.split('/')[0]
                    if first in layers and layers.index(first) > rank:
                        problems.append(f'{where}: #include "{target}": {layer} may not use {first}, '
                                        f'a later layer ({" < ".join(layers)})')
    return problems, count


# The plugins, outside libnnrt: backends, communicators and the ONNX converter (plugins/).
PLUGIN_FOLDERS = ['plugins']


def plugin_violations(root):
    problems, count = [], 0
    for top in PLUGIN_FOLDERS:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith(('.h', '.cpp', '.cu', '.hpp')):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding='utf-8') as f:
                    targets = INCLUDE.findall(f.read())
                count += len(targets)
                problems += [f'{os.path.relpath(path, root)}: #include "{t}" climbs out of its plugin\'s folder'
                             for t in targets if '..' in t.split('/')]
    return problems, count


def symbols(archive, defined):
    args = ['nm', '--defined-only' if defined else '--undefined-only', '--format=posix', archive]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        # "name type [value size]"; archive member headers end with ":" or "]:".
        if len(parts) >= 2 and not line.endswith(':'):
            names.add(parts[0])
    return names


def symbol_violations(archives, layers):
    defined = [symbols(a, True) for a in archives]
    problems = []
    for rank, archive in enumerate(archives):
        below = set().union(*defined[:rank + 1])
        for name in sorted(symbols(archive, False) - below):
            later = [layers[i] for i in range(rank + 1, len(layers)) if name in defined[i]]
            if later:
                demangled = subprocess.run(['c++filt', name], capture_output=True, text=True).stdout.strip()
                problems.append(f'{os.path.basename(archive)} refers to {demangled or name}, '
                                f'defined only in the later layer {later[0]}')
    return problems, sum(len(d) for d in defined)


def main():
    if len(sys.argv) < 3:
        sys.exit('usage: check_layers.py SOURCE_ROOT LIBNNRT_CORE.A [LIBNNRT_<LAYER>.A ...]')
    src = os.path.join(sys.argv[1], 'src')
    archives = sys.argv[2:]
    layers = [layer_name(a) for a in archives]
    problems, includes = source_violations(src, layers)
    more, defined = symbol_violations(archives, layers)
    problems += more
    more, plugin_includes = plugin_violations(sys.argv[1])
    problems += more
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} wrong-way use(s) between layers')
        return 1
    print(f'layers {" < ".join(layers)}: {includes} includes and the references among {defined} '
          f'defined symbols all go one way; the plugins\' {plugin_includes} includes stay in their folders')
    return 0


if __name__ == '__main__':
    sys.exit(main())
