"""Build the test4 split labels (labelled by hand from the written label definitions in SOURCES.md, before any
classifier run on these pages). The pages were transcribed from the stored public repositories into pages/ (see
SOURCES.md, "Fifth round"); this script only finds the heading lines and writes the labels. It refuses to run twice.

Headings: Markdown pages as in make_test3.py (ATX and setext outside front matter and code fences). HTML pages: the
first ``<h1>``..``<h6>`` element of each line (a line holding two headings, like a page footer, is one section);
a heading whose text is built by the template (it holds a ``{{ ... }}`` expression, e.g. one heading per database
record in a loop) is not a section of its own and is not labelled.
"""
import html as htmllib
import json, os, re
BASE = os.path.dirname(os.path.abspath(__file__))
D = 'pages/de/mbuechner__ddb-virtualexhibitions-docs/docs'
G = 'pages/nl/collectiegroesbeek__collectiegroesbeek/collectiegroesbeek/templates'
O = 'pages/fr/inventaire-des-orgues__docs/docs'
C = 'pages/en/creativecommons__openglam/docs'
# (page, lang, site, {heading: (label, why, ambiguous)})
PAGES = [
 (f'{D}/impressum.md', 'de', 'mbuechner/ddb-virtualexhibitions-docs', {
   "Impressum": ('other', 'imprint (no body of its own)', False),
   "Anbieter:": ('other', 'imprint: legal provider with address, phone, e-mail', True),
   "Vertretungsberechtigter:": ('other', 'imprint: legal representative', False),
   "Umsatzsteuer-Identifikationsnummer:": ('other', 'imprint: VAT number', False),
   "Ansprechpartner und Verantwortlicher nach § 55 Abs. 2 RStV:": ('other', 'imprint: person responsible under media law, address and e-mail', True),
   "Technischer Betrieb:": ('other', 'imprint: technical operator', False),
   "Redaktion:": ('other', 'credits of the handbook', False),
   "Rechtsstatus des Textes": ('other', 'licence of the text', False),
   "Rechtsstatus der Abbildungen": ('other', 'licence of the images', False)}),
 (f'{D}/index.md', 'de', 'mbuechner/ddb-virtualexhibitions-docs', {
   "Kuratoren-Handbuch für DDBstudio": ('other', 'title of a how-to handbook (no body of its own)', False),
   "Virtuelle Ausstellungen in der Deutschen Digitalen Bibliothek gestalten": ('other', 'subtitle with credits and date of the handbook', False)}),
 (f'{D}/einleitung.md', 'de', 'mbuechner/ddb-virtualexhibitions-docs', {
   "Einleitung": ('other', 'introduction of the curators\' handbook: what the exhibition service offers, its software, rules, help desk', True)}),
 (f'{G}/index.html', 'nl', 'collectiegroesbeek/collectiegroesbeek', {
   "Collectie Groesbeek": ('collection', 'site title: indexes from the archive of J.W. Groesbeek, search and browse buttons', True),
   "Over de collectie": ('collection', 'the card index: what it holds (deeds up to 1800), parts, 150,000 cards, digitisation; compiled 1925-1994', True),
   "Indexen": ('collection', 'the indexes of the collection with document counts and descriptions', False),
   "Inhoud": ('other', 'editorial notes on the cards: empty fields, spelling of names, sorting', True),
   "Tekens": ('other', 'signs used in the cards (editorial convention)', False),
   "Gebruik": ('collection', 'how to search the database: names, years, places, sources', True)}),
 (f'{G}/bronnen.html', 'nl', 'collectiegroesbeek/collectiegroesbeek', {
   "Bronnen": ('collection', 'list of the archival sources cited in the dataset, linked to searches', True)}),
 (f'{G}/publicaties.html', 'nl', 'collectiegroesbeek/collectiegroesbeek', {
   "Publicaties": ('other', 'table of publications (publication list)', True)}),
 (f'{G}/locations.html', 'nl', 'collectiegroesbeek/collectiegroesbeek', {
   "Locaties": ('collection', 'places extracted from one register of the collection, linked to searches', False)}),
 (f'{G}/spelling_mistake_candidates.html', 'nl', 'collectiegroesbeek/collectiegroesbeek', {
   "Mogelijke spelfouten": ('other', 'data-quality page: possible spelling mistakes in the source data', False)}),
 ('pages/en/collectiegroesbeek__collectiegroesbeek/README.md', 'en', 'collectiegroesbeek/collectiegroesbeek', {
   "Collectie Groesbeek": ('other', 'software README title: the Flask/Elasticsearch web app', False),
   "About": ('collection', 'the historical card index and what it covers; the app is its front end', True),
   "Installation part 1: data": ('other', 'installation guide', False),
   "Setting up Elasticsearch": ('other', 'installation guide', False),
   "Security": ('other', 'installation guide (configuration)', False),
   "Data ingestion": ('other', 'installation guide (loading the data)', False),
   "Installation part 2: webserver": ('other', 'installation guide', False),
   "Users and permission": ('other', 'installation guide', False),
   "Python": ('other', 'installation guide', False),
   "Install nginx": ('other', 'installation guide', False),
   "Create a Python virtual environment": ('other', 'installation guide', False),
   "Install Python packages": ('other', 'installation guide', False),
   "Logging": ('other', 'installation guide', False),
   "Systemd services": ('other', 'installation guide', False),
   "nginx website configuration": ('other', 'installation guide', False),
   "HTTPS": ('other', 'installation guide', False),
   "Debugging": ('other', 'installation guide', False),
   "Contributing": ('other', 'software contributions: open an issue or PR', False)}),
 (f'{O}/index.md', 'fr', 'inventaire-des-orgues/docs', {
   "Bienvenue sur le site de documentation de l'inventaire national des orgues": ('other', 'home title of the documentation site (no body of its own)', False),
   "Foire aux questions": ('other', 'teaser: the FAQ', False),
   "La fiche descriptive": ('other', 'teaser: the data model of an organ record', False),
   "Conventions et abréviations": ('other', 'teaser: editorial conventions', False),
   "Les données collectées": ('collection', 'teaser: the many sources that feed the inventory (state data, inventory books, sites)', True),
   "Le code source des outils": ('other', 'teaser: source code of the tools', False),
   "Comment contribuer au projet ?": ('other', 'how to contribute (write to us, current needs, forum)', True),
   "Le vocabulaire": ('other', 'teaser: the organ lexicon', False),
   "La charte du contributeur": ('other', 'link to the contributors\' charter', False)}),
 (f'{O}/mentions-legales.md', 'fr', 'inventaire-des-orgues/docs', {
   "Mentions légales": ('other', 'legal notice (no body of its own)', False),
   "Hébergement du site et des données": ('other', 'legal notice: hosting providers and their addresses', False),
   "Traitement des données à caractère personnel": ('other', 'privacy', False),
   "Droits de propriété intellectuelle": ('other', 'licences', False),
   "Liens hypertextes": ('other', 'legal notice on links (no body of its own)', False),
   "Liens de www.inventaire-des-orgues.org vers d’autres sites": ('other', 'liability for links', False),
   "Etablir un lien vers www.inventaire-des-orgues.org": ('other', 'conditions for linking', False)}),
 (f'{O}/pourquoi.md', 'fr', 'inventaire-des-orgues/docs', {
   "Ai-je le droit de contribuer ?": ('other', 'FAQ: who may contribute (charter)', False),
   "Quels sont mes droits d’auteur sur les images que je publie ?": ('other', 'FAQ: licences of contributions', False),
   "Qui porte le projet ?": ('about', 'who runs the project: the association, the federation and the ministry; their roles', False),
   "Ai-je le droit de prendre une photo d’orgue et de la publier ?": ('other', 'FAQ: photo rights', False)}),
 (f'{O}/merci.md', 'fr', 'inventaire-des-orgues/docs', {
   "Remerciements": ('other', 'acknowledgements', False),
   "Ministère de la culture": ('other', 'acknowledgements: ministry staff', False),
   "Directions régionales de affaires culturelles": ('other', 'acknowledgements (no body of its own)', False),
   "Services de l'Inventaire": ('other', 'acknowledgements (no body of its own)', False),
   "Associations nationales": ('other', 'acknowledgements: national associations, designer', False),
   "Associations régionales": ('other', 'acknowledgements: regional associations', False),
   "Facteurs d'orgue": ('other', 'acknowledgements: organ builders', False),
   "FabDev": ('other', 'acknowledgements: the developing company', False)}),
 (f'{O}/code-source.md', 'fr', 'inventaire-des-orgues/docs', {
   "Code source": ('other', 'source code page (no body of its own)', False),
   "Quelles sont les technologies utilisées pour le portail de l'inventaire ?": ('other', 'technologies used', False),
   "Dépôts de code": ('other', 'code repositories and their licences', False),
   "Dépôts de données": ('collection', 'the data repositories of the inventory (index of organs, index of inventory books)', True)}),
 (f'{O}/donnees.md', 'fr', 'inventaire-des-orgues/docs', {
   "Nos sources de données": ('collection', 'the inventory is built from many existing sources, later completed by contributors', True),
   "Présentation des différentes ressources": ('collection', 'the data that feed the inventory: paper inventories 1985-2006, state databases, sites', False),
   "Les [livres d'inventaires](donnees_livres.md)": ('collection', 'the inventory books collected by the association', True),
   "Les [sites personnels ou associatifs](donnees_sites.md)": ('collection', 'pointer to the personal and association sites used as sources (no body of its own)', True),
   "Articles et documents sur l'orgue": ('other', 'documents about organs in general available online (topic, not the subject)', False),
   "Archives ouvertes": ('other', 'external platform with articles about organs', False),
   "Moteur collections et plate-forme ouverte du patrimoine": ('other', 'links to external search engines', False),
   "Lexique de l'orgue": ('other', 'bibliography of the lexicon', False)}),
 (f'{C}/principles/index.html', 'en', 'creativecommons/openglam', {
   "OpenGLAM Principles": ('about', 'what the initiative stands for: the role of GLAMs, openness, the Open Definition', True),
   "An OpenGLAM institution champions these principles:": ('about', 'heading of the list of principles (no body of its own)', True),
   "1. Release digital information about the artefacts (metadata) into the public domain using an appropriate legal tool such as the Creative Commons Zero Waiver .": ('other', 'guideline for institutions: metadata licensing, example policies', True),
   "2. Keep digital representations of works for which copyright has expired (public domain) in the public domain by not adding new rights to them.": ('other', 'guideline for institutions: public domain works, example policies', True),
   "3. When publishing data make an explicit and robust statement of your wishes and expectations with respect to reuse and repurposing of the descriptions, the whole data collection, and subsets of the collection.": ('other', 'guideline for institutions: reuse statements, examples', True),
   "4. When publishing data use open file formats which are machine-readable .": ('other', 'guideline for institutions: open file formats', True),
   "5. Opportunities to engage audiences in novel ways on the web should be pursued.": ('other', 'guideline for institutions: audience engagement', True),
   "Join our community": ('other', 'page footer: subscribe and follow links, site licence statement, supporter', True)}),
 (f'{C}/2012/04/02/open-glam-workshop-in-berlin/index.html', 'en', 'creativecommons/openglam', {
   "Open GLAM Legal Workshop in Berlin": ('news', 'announcement of a workshop on 20 April 2012 with place, time and programme', False),
   "Join our community": ('other', 'page footer: subscribe and follow links, site licence statement, supporter', True)}),
]
_FENCE = re.compile(r'^\s{0,3}(`{3,}|~{3,})')
_H = re.compile(r'<h([1-6])\b[^>]*>(.*?)</h\1\s*>', re.S | re.I)


def md_headings(text):
    """(char_start, line, title, level, source) of the headings: ATX and setext outside front matter and code
    fences; a page without an ATX/setext heading of level 1 gets its front-matter ``title:`` line (as make_test3)."""
    lines = text.split('\n')
    starts, pos = [], 0
    for line in lines:
        starts.append(pos); pos += len(line) + 1
    front = -1
    if lines and lines[0] == '---':
        front = next((i for i in range(1, len(lines)) if lines[i] == '---'), -1)
    out, fence = [], None
    for i, line in enumerate(lines):
        if i <= front:
            continue
        f = _FENCE.match(line)
        if f:
            fence = None if fence and f.group(1)[0] == fence else (fence or f.group(1)[0])
            continue
        if fence:
            continue
        h = re.match(r'(#{1,6})\s+(.*?)\s*$', line)
        if h:
            out.append((starts[i], line, h.group(2), len(h.group(1)), 'md'))
        elif i + 1 < len(lines) and re.match(r'^(=+|-+)\s*$', lines[i + 1]) and line.strip():
            out.append((starts[i], line, line.strip(), 1 if lines[i + 1].startswith('=') else 2, 'md'))
    if front > 0 and not any(lv == 1 for *_, lv, _s in out):
        for i in range(1, front):
            m = re.match(r'title:\s*(.*?)\s*$', lines[i])
            if m:
                out.insert(0, (starts[i], lines[i], m.group(1), 1, 'front_matter_title'))
    return out


def html_headings(text):
    """(char_start, line, title, level, 'html') of the first heading element of each line (module docstring)."""
    lines = text.split('\n')
    starts, pos = [], 0
    for line in lines:
        starts.append(pos); pos += len(line) + 1
    out, seen = [], set()
    for m in _H.finditer(text):
        if '{{' in m.group(2):
            continue
        n = text.count('\n', 0, m.start())
        if n in seen:
            continue
        seen.add(n)
        title = ' '.join(htmllib.unescape(re.sub(r'<[^>]*>', ' ', m.group(2))).split())
        out.append((starts[n], lines[n], title, int(m.group(1)), 'html'))
    return out


if __name__ == '__main__':
    if any(json.loads(l).get('split') == 'test4' for l in open(os.path.join(BASE, 'labels.jsonl'), encoding='utf-8') if l.strip()):
        raise SystemExit('labels.jsonl already has the test4 split')
    out = []
    for page, lang, site, labels in PAGES:
        text = open(os.path.join(BASE, page), encoding='utf-8', newline='').read()
        found = html_headings(text) if page.endswith('.html') else md_headings(text)
        seen = set()
        for start, line, title, level, source in found:
            if title not in labels:
                raise SystemExit(f'unlabelled heading {title!r} in {page}')
            lab, why, amb = labels[title]; seen.add(title)
            out.append({"page": page, "lang": lang, "site": site, "heading": title, "heading_level": level,
                        "char_start": start, "heading_line": line, "heading_source": source,
                        "label": lab, "why": why, "split": "test4", "ambiguous": amb})
        missing = set(labels) - seen
        if missing:
            raise SystemExit(f'labels not found {missing} in {page}')
    with open(os.path.join(BASE, 'labels.jsonl'), 'a', encoding='utf-8') as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + '\n')
    from collections import Counter
    print(len(out), Counter(r['lang'] for r in out), Counter(r['label'] for r in out), len({r['site'] for r in out}), 'sites',
          sum(r['ambiguous'] for r in out), 'ambiguous')
