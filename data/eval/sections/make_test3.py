"""Build the test3 split labels (labelled by hand from the written label definitions in SOURCES.md, before any
classifier run on these pages). The pages were transcribed from the stored public repositories into pages/ (see
SOURCES.md, "Fourth round"); this script only finds the heading lines and writes the labels. It refuses to run twice.
"""
import json, os, re
BASE = os.path.dirname(os.path.abspath(__file__))
U = 'pages/de/UB-Mannheim__UBi/data/markdown_processed'
I = 'pages/de/dainst__ianus-web-content'
K = 'pages/nl/knaw-huc__di-website/content/markdown/nl-nl/pages'
B = 'pages/fr/biblissima__doc.biblissima/docs'
# (page, lang, site, {heading: (label, why, ambiguous)})
PAGES = [
 (f'{U}/oeffnungszeiten.md', 'de', 'UB-Mannheim/UBi', {
   "Öffnungszeiten der Universitätsbibliothek Mannheim": ('visit', 'page title: opening hours (no body of its own)', False),
   "Sonderöffnungszeiten": ('visit', 'special opening hours on a holiday', False),
   "Ausleihzentrum Schloss Westflügel": ('visit', 'opening hours of the lending desk and the return machine', False),
   "InfoCenter": ('visit', 'services at the desk and its opening hours', False),
   "Bibliotheksbereiche A3, A5, Schloss Ehrenhof und Schloss Schneckenhof": ('visit', 'opening hours of the library areas', False)}),
 (f'{U}/ihre-ub.md', 'de', 'UB-Mannheim/UBi', {
   "Ihre Universitätsbibliothek": ('about', 'the "your library" area: pointers to jobs, projects, exhibitions, contact persons', True),
   "Aktuelles": ('news', 'teaser: latest news from the library', False),
   "Stellenangebote und Ausbildung": ('other', 'job vacancies and training', False),
   "Ansprechpersonen": ('contact', 'teaser: contact persons for subjects and questions', False),
   "Bibliotheksprofil": ('about', 'teaser: figures, facts and some history of the library', False),
   "Ausstellungen und Veranstaltungen": ('news', 'teaser: current and past exhibitions and events', False),
   "Projekte der UB": ('about', "teaser: the library's funded projects", False),
   "Publikationen": ('other', 'publication list of the staff', False),
   "Rechtliche Grundlagen": ('other', 'legal bases: rules of use and fee regulations', True)}),
 (f'{U}/ihre-ub_ansprechpersonen.md', 'de', 'UB-Mannheim/UBi', {
   "Ansprechpersonen der Universitätsbibliothek Mannheim": ('contact', 'the contact persons of the library', False),
   "Direktion und Fachliche Beratung": ('contact', 'links to the contact pages of direction, advice, PR, training', True),
   "Bibliotheksbereiche": ('contact', 'links to the contact pages of the library areas (could be read as organisation)', True),
   "Abteilungen": ('contact', 'links to the contact pages of the departments (could be read as organisation)', True),
   "Beschäftigte von A bis Z": ('contact', 'list with e-mail addresses and phone numbers of all staff', False)}),
 (f'{U}/medien_sammlungen.md', 'de', 'UB-Mannheim/UBi', {
   "Sammlungen der Universitätsbibliothek Mannheim": ('collection', 'page title: the collections (no body of its own)', False),
   "Überblick": ('collection', 'special collections, digital collections', False),
   "Digitalisierung": ('collection', 'digitisation of the historical holdings, reuse, full text', False),
   "Digitalisierungsservice": ('collection', 'digitisation on demand, results go into the digital collections', True),
   "Nutzung von Alten Drucken": ('visit', 'order in the catalogue, view at the special reading places, no loan', True),
   "Nutzungsregeln für historische Drucke": ('visit', 'rules of use in the special reading area', False),
   "Gesundheitsschutz beim Umgang mit historischen Büchern": ('visit', 'precautions when using old books, gloves at the reading place', True),
   "Ansprechpartner für Sonderbestände": ('contact', 'contact person with address, phone, e-mail', False)}),
 (f'{I}/ergebnisse.md', 'de', 'dainst/ianus-web-content', {
   "Ergebnisse": ('about', "page title: the project's results (no body of its own)", True),
   "Kurzinformationen zu IANUS": ('about', 'downloads: mission statement, short portrait, flyer, poster', True),
   "Fach- und Organisationskonzept": ('about', 'the concept for running the national research data centre', True),
   "Online-Portal mit Forschungsdaten und Nachweisen von Metadaten": ('collection', 'the data portal: curated and archived data collections', False),
   "Archivierung bei IANUS": ('other', 'pointer to the guide on depositing data and the curation workflow', True)}),
 (f'{I}/impressum.md', 'de', 'dainst/ianus-web-content', {
   "Impressum": ('other', 'imprint: publisher with address, legal representative', True),
   "Pressestelle": ('contact', 'the press office contact person', True),
   "Zuständigkeit www.ianus-fdz.de": ('other', 'persons responsible for the site (imprint), one e-mail', True),
   "Haftungsausschluss": ('other', 'disclaimer', False),
   "Copyright": ('other', 'licence of the content', False),
   "Externe Verweise und Links": ('other', 'liability for links', False),
   "Datenschutz": ('other', 'privacy', False),
   "Rechtswirksamkeit": ('other', 'legal validity of the disclaimer', False)}),
 (f'{K}/03_00_partners.md', 'nl', 'knaw-huc/di-website', {
   "Partners": ('about', 'the Humanities Cluster, its institutes and labs: partners', False),
   "Huygens Instituut": ('about', 'partner institute and its work', False),
   "Meertens Instituut": ('about', 'partner institute and its work', False),
   "Internationaal Instituut voor Sociale Geschiedenis": ('about', 'partner institute and its work (mentions its collections)', False),
   "NL-Lab": ('about', 'research group of the cluster', False),
   "DHLab": ('about', 'research group of the cluster', False),
   "Cultural AI Lab": ('about', 'partner lab', False),
   "Externe partners": ('about', 'logos of the external partners, linked', True)}),
 (f'{K}/04_07_contact.md', 'nl', 'knaw-huc/di-website', {
   "Contact": ('contact', 'e-mail, address, phone', False)}),
 (f'{K}/04_01_missie.md', 'nl', 'knaw-huc/di-website', {
   "Missie": ('about', 'mission of the department', False)}),
 (f'{K}/04_02_De-afdeling.md', 'nl', 'knaw-huc/di-website', {
   "De afdeling": ('about', 'the department: origin in 2018, focus, staff, teams', False)}),
 (f'{K}/04_08_colofon.md', 'nl', 'knaw-huc/di-website', {
   "Colofon": ('other', 'credits and licence', False)}),
 (f'{K}/04_04_werken-bij-di.md', 'nl', 'knaw-huc/di-website', {
   "Werken bij DI": ('other', 'working here, open applications', False)}),
 (f'{K}/02_03_beheren-digitale-data.md', 'nl', 'knaw-huc/di-website', {
   "Beheren digitale data": ('collection', 'datasets and digital collections kept and made available, list of them', True)}),
 (f'{B}/index.md', 'fr', 'biblissima/doc.biblissima', {
   "Documentation de Biblissima+": ('other', 'home of the technical documentation site: who writes it, source, licence, contact', True)}),
 (f'{B}/referentiels/index.md', 'fr', 'biblissima/doc.biblissima', {
   "Les référentiels Biblissima": ('collection', 'the authority files and the platform that publishes them', True),
   "Référentiels disponibles": ('collection', 'pointer to the list of available authority files, talks about them', True),
   "Mises à jour": ('other', 'pointer to the edit log of the Wikibase (technical)', True),
   "API": ('other', 'API documentation pointer', False)}),
 (f'{B}/portail/index.md', 'fr', 'biblissima/doc.biblissima', {
   "Le Portail Biblissima": ('collection', 'page title: the data portal (no body of its own)', True),
   "Présentation": ('collection', 'what the portal gives access to; who runs it', True),
   "Périmètre de données": ('collection', 'the 30 data sources of the portal', False),
   "Gestion, traitement et intégration des données": ('other', 'data management (no body of its own)', True),
   "Vademecum": ('other', 'guide for data providers', False),
   "Format pivot": ('other', 'import data format', False),
   "Plan de gestion des données": ('other', 'data management plan', False),
   "Technologies et outils utilisés": ('other', 'software and viewers used', False),
   "Mises à jour": ('news', 'pointer to the journal of updates and developments', True),
   "API": ('other', 'API pointer', False)}),
 ('pages/en/metmuseum__openaccess/README.md', 'en', 'metmuseum/openaccess', {
   "The Metropolitan Museum of Art Open Access": ('collection', 'the museum and its open datasets of 420,000 artworks (CC0, CSV)', True),
   "Additional usage guidelines": ('other', 'usage guidelines (no body of its own)', False),
   "Images not included": ('other', 'what the dataset does not include, image policy', True),
   "Documentation in progress": ('other', 'disclaimer and update advice', False),
   "Pull requests": ('other', 'no pull requests; report errors by e-mail', True),
   "Attribution": ('other', 'attribution guideline', False),
   "Do not misrepresent the dataset": ('other', 'reuse guideline', False)}),
 ('pages/en/tategallery__collection/README.md', 'en', 'tategallery/collection', {
   "The Tate Collection": ('collection', 'metadata of 70,000 artworks and 3,500 artists, CC0', True),
   "Examples": ('other', 'links to reuses of the data', False),
   "Repository Contents": ('other', 'data formats JSON and CSV', False),
   "JSON": ('other', 'data format (no body of its own)', False),
   "Artists": ('other', 'file layout of the artist records', False),
   "Artworks": ('other', 'file layout of the artwork records, accession numbers', True),
   "CSV": ('other', 'data format, encoding', False),
   '<a name="usage"></a>Usage guidelines for open data': ('other', 'data-use guidelines', False),
   "Give attribution to Tate": ('other', 'data-use guideline', False),
   "Metadata is dynamic": ('other', 'data-use guideline', False),
   "Mention your modifications of the Metadata and contribute your modified Metadata back": ('other', 'data-use guideline', False),
   "Be responsible": ('other', 'data-use guideline', False),
   "Ensure that you do not mislead others or misrepresent the Metadata or its sources": ('other', 'data-use guideline', False)}),
]
_FENCE = re.compile(r'^\s{0,3}(`{3,}|~{3,})')


def headings(text):
    """(char_start, line, title, level, source) of the headings: ATX and setext outside front matter and code
    fences; a page without an ATX/setext heading of level 1 gets its front-matter ``title:`` line."""
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


if any(json.loads(l).get('split') == 'test3' for l in open(os.path.join(BASE, 'labels.jsonl'), encoding='utf-8') if l.strip()):
    raise SystemExit('labels.jsonl already has the test3 split')
out = []
for page, lang, site, labels in PAGES:
    text = open(os.path.join(BASE, page), encoding='utf-8', newline='').read()
    seen = set()
    for start, line, title, level, source in headings(text):
        if title not in labels:
            raise SystemExit(f'unlabelled heading {title!r} in {page}')
        lab, why, amb = labels[title]; seen.add(title)
        out.append({"page": page, "lang": lang, "site": site, "heading": title, "heading_level": level,
                    "char_start": start, "heading_line": line, "heading_source": source,
                    "label": lab, "why": why, "split": "test3", "ambiguous": amb})
    missing = set(labels) - seen
    if missing:
        raise SystemExit(f'labels not found {missing} in {page}')
with open(os.path.join(BASE, 'labels.jsonl'), 'a', encoding='utf-8') as f:
    for r in out:
        f.write(json.dumps(r, ensure_ascii=False) + '\n')
from collections import Counter
print(len(out), Counter(r['lang'] for r in out), Counter(r['label'] for r in out), len({r['site'] for r in out}), 'sites')
