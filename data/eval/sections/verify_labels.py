#!/usr/bin/env python3
"""Verify labels.jsonl and visit_facts.jsonl against the saved pages.

Offsets are Python code-point offsets into the file read as UTF-8 with
newline='' (so CRLF files keep their \r characters).
Run from anywhere:  python3 verify_labels.py
"""
import json, os, re, sys
from collections import Counter, defaultdict

BASE = os.path.dirname(os.path.abspath(__file__))
LABELS = {'about', 'contact', 'collection', 'visit', 'news', 'history', 'other'}
LANGS = {'nl', 'en', 'fr', 'de'}
_cache = {}

def text_of(page):
    if page not in _cache:
        with open(os.path.join(BASE, page), encoding='utf-8', newline='') as f:
            _cache[page] = f.read()
    return _cache[page]

def norm(s):
    return re.sub(r'\s+', ' ', s)

errors = []
recs = [json.loads(l) for l in open(os.path.join(BASE, 'labels.jsonl'), encoding='utf-8') if l.strip()]
site_split = defaultdict(set)
for n, r in enumerate(recs, 1):
    t = text_of(r['page'])
    cs = r['char_start']
    where = f"labels.jsonl:{n} {r['page']}@{cs}"
    if not (cs == 0 or t[cs - 1] == '\n'):
        errors.append(where + ': char_start is not at a line start')
    line_end = t.find('\n', cs)
    line = t[cs:len(t) if line_end < 0 else line_end].rstrip('\r')
    if not t[cs:].startswith(r['heading_line']) or line != r['heading_line']:
        errors.append(where + ': heading_line does not match the line at char_start')
    window = t[cs:cs + 600]
    if r['heading'] not in window and norm(r['heading']) not in norm(window):
        errors.append(where + ': heading text not found at char_start')
    if r['label'] not in LABELS: errors.append(where + ': bad label')
    if r['lang'] not in LANGS: errors.append(where + ': bad lang')
    if r['split'] not in ('dev', 'test', 'test2', 'test3'): errors.append(where + ': bad split')
    if not r['page'].startswith(f"pages/{r['lang']}/"): errors.append(where + ': lang/page mismatch')
    site_split[r['site']].add(r['split'])
for s, sp in site_split.items():
    if len(sp) > 1: errors.append(f'site {s} appears in more than one split: {sp}')

facts = [json.loads(l) for l in open(os.path.join(BASE, 'visit_facts.jsonl'), encoding='utf-8') if l.strip()]
for n, r in enumerate(facts, 1):
    t = text_of(r['page'])
    if t[r['char_start']:r['char_end']] != r['answer_text']:
        errors.append(f"visit_facts.jsonl:{n}: offsets do not give answer_text")

print('sections:', len(recs))
print('by lang:', dict(Counter(r['lang'] for r in recs)))
print('by split:', dict(Counter(r['split'] for r in recs)))
print('by lang x label:')
for lg in sorted(LANGS):
    print(' ', lg, dict(Counter(r['label'] for r in recs if r['lang'] == lg)))
print('test langs:', sorted({r['lang'] for r in recs if r['split'] == 'test'}))
print('ambiguous:', sum(1 for r in recs if r.get('ambiguous')))
print('visit facts:', len(facts), 'pages:', len({f['page'] for f in facts}))
if errors:
    print('ERRORS:'); [print(' ', e) for e in errors]; sys.exit(1)
print('OK: all offsets verified')
