"""Build the test2 split labels (labelled by hand from the label definitions, before any classifier run)."""
import json, os, re, shutil
BASE = os.path.dirname(os.path.abspath(__file__))
# the originals, in the team's shared data folder (byte copies are made under pages/)
SHARED = os.environ.get('HERITAGE_SHARED_DATA', '/work/shared/data')
G = f'{SHARED}/faq/gbif_grscicoll'
L = f'{SHARED}/realworld/raw/document/seeing-lost-enclaves'
# (src, lang, site, dest, {heading: (label, why, ambiguous)})
PAGES = [
 (f'{G}/fr/about.md', 'fr', 'gbif/hp-grscicoll', 'pages/fr/gbif__hp-grscicoll/fr/about.md', {
   "Qu'est que le Registre Global the Collections Scientifiques (GRSciColl)?": ('about', 'what the registry is and who maintains it', False),
   "Histoire des données": ('history', 'where the data came from over the years', True),
   "Comment tout à commencé": ('history', 'origins: OECD forum, CBOL, adopted by GBIF in 2018', False),
   "Où nous en sommmes": ('about', 'current state of the service and its work', True),
   "Les prochaines étapes": ('about', 'pointer to the road map of the service', True)}),
 (f'{G}/fr/api.md', 'fr', 'gbif/hp-grscicoll', 'pages/fr/gbif__hp-grscicoll/fr/api.md', {
   "Qu'est-ce qu'une API": ('other', 'explains what an API is: technical documentation', False),
   "Introduction à l'API GBIF": ('other', 'webinar on the API: technical documentation', False),
   "Documentation technique": ('other', 'link to API documentation', False)}),
 (f'{G}/fr/contact.md', 'fr', 'gbif/hp-grscicoll', 'pages/fr/gbif__hp-grscicoll/fr/contact.md', {
   "Mise à jour ou ajout d'un enregistrement": ('other', 'only a pointer to the how-to page, no contact data', True),
   "Publier sur notre forum": ('contact', 'contact channel: forum', True),
   "Abonnez-vous à notre liste de diffusion": ('contact', 'contact channel: mailing list for questions', True),
   "Nous écrire un e-mail": ('contact', 'e-mail address', False)}),
 (f'{G}/fr/get-involved.md', 'fr', 'gbif/hp-grscicoll', 'pages/fr/gbif__hp-grscicoll/fr/get-involved.md', {
   "Aidez-nous à améliorer les données": ('other', 'how to contribute data (volunteer editing)', True),
   "Aidez-nous à améliorer le système": ('other', 'how to contribute to development (mailing list/forum)', True),
   "Aidez-nous à traduire notre site web": ('other', 'volunteer translation on CrowdIn', True)}),
 (f'{G}/fr/how-to.md', 'fr', 'gbif/hp-grscicoll', 'pages/fr/gbif__hp-grscicoll/fr/how-to.md', {
   "Comment ajouter une collection ou une institution à GRSciColl": ('other', 'editing instructions of the registry (user guide), not a collection description', False),
   "Comment éditer une collection ou une institution GRSciColl": ('other', 'editing instructions', False),
   "Suggérer une modification": ('other', 'editing instructions', False),
   "Devenir un éditeur, une éditrice": ('other', 'editor roles and how to apply', False),
   "Importer des données": ('other', 'API for batch editing: technical', False),
   "Comment partager des descripteurs de collection": ('other', 'pointer to a tutorial', False)}),
 (f'{G}/en/about.md', 'en', 'gbif/hp-grscicoll', 'pages/en/gbif__hp-grscicoll/en/about.md', {
   "What is the Global Registry of Scientific Collections?": ('about', 'what the registry is', False),
   "Data history": ('history', 'where the data came from over the years', True),
   "How it all started": ('history', 'origins', False),
   "Where are we now": ('about', 'current state of the service', True),
   "What's next": ('about', 'pointer to road map', True)}),
 (f'{G}/en/api.md', 'en', 'gbif/hp-grscicoll', 'pages/en/gbif__hp-grscicoll/en/api.md', {
   "What is an API": ('other', 'technical documentation', False),
   "Introduction to the GBIF API": ('other', 'technical documentation', False),
   "Technical Documentation": ('other', 'link to API docs', False)}),
 (f'{G}/en/contact.md', 'en', 'gbif/hp-grscicoll', 'pages/en/gbif__hp-grscicoll/en/contact.md', {
   "Update or add a record": ('other', 'pointer to how-to', True),
   "Post on our forum": ('contact', 'forum channel', True),
   "Subscribe and use our mailing list": ('contact', 'mailing list channel', True),
   "Send us an email": ('contact', 'e-mail address', False)}),
 (f'{G}/en/get-involved.md', 'en', 'gbif/hp-grscicoll', 'pages/en/gbif__hp-grscicoll/en/get-involved.md', {
   "Help us improve the data": ('other', 'how to contribute data', True),
   "Help us improve the system": ('other', 'how to contribute to development', True),
   "Help us translate the website": ('other', 'volunteer translation', True)}),
 (f'{L}/index.md', 'en', 'LibraryOfCongress/seeing-lost-enclaves', 'pages/en/LibraryOfCongress__seeing-lost-enclaves/index.md', {
   "Hidden Portals": ('news', 'a public event in May 2024 (virtual installations)', True),
   "[View archived portals](sites) | [Visit Hidden Portals website &raquo;](https://libraryofcongress.github.io/seeing-lost-enclaves/portals/)": ('other', 'link bar', True),
   "Toolkit": ('other', 'what this guide (toolkit) covers: a practice guide, not the institution', True),
   "Contents": ('other', 'table of contents', False),
   "[1. Research](research/)": ('other', 'navigation tile', False),
   "[2. Modeling](modeling/)": ('other', 'navigation tile', False),
   "[3. Atmosphere](atmosphere/)": ('other', 'navigation tile', False),
   "[4. Soundscapes](soundscapes/)": ('other', 'navigation tile', False),
   "Also see": ('other', 'links', False),
   "What is relational reconstruction?": ('other', 'method explanation', False),
   "Seeing Providence Chinatown": ('about', 'the project this guide comes from, its support', True)}),
]
if any(json.loads(l).get('split') == 'test2' for l in open(os.path.join(BASE, 'labels.jsonl'), encoding='utf-8') if l.strip()):
    raise SystemExit('labels.jsonl already has the test2 split')
out = []
for src, lang, site, dest, labels in PAGES:
    d = os.path.join(BASE, dest); os.makedirs(os.path.dirname(d), exist_ok=True); shutil.copyfile(src, d)
    text = open(d, encoding='utf-8', newline='').read()
    front_end = 0
    m = re.match(r'\A---\n.*?\n---\n', text, re.S)
    if m: front_end = m.end()
    pos = 0; seen = set()
    for line in text.split('\n'):
        start = pos; pos += len(line) + 1
        if start < front_end: continue
        h = re.match(r'(#{1,6})\s+(.*?)\s*$', line.rstrip('\r'))
        if not h: continue
        title = h.group(2)
        if title not in labels: raise SystemExit(f'unlabelled heading {title!r} in {dest}')
        lab, why, amb = labels[title]; seen.add(title)
        out.append({"page": dest, "lang": lang, "site": site, "heading": title, "heading_level": len(h.group(1)),
                    "char_start": start, "heading_line": line.rstrip('\r'), "heading_source": "markdown",
                    "label": lab, "why": why, "split": "test2", "ambiguous": amb})
    missing = set(labels) - seen
    if missing: raise SystemExit(f'labels not found {missing}')
with open(os.path.join(BASE, 'labels.jsonl'), 'a', encoding='utf-8') as f:
    for r in out: f.write(json.dumps(r, ensure_ascii=False) + '\n')
from collections import Counter
print(len(out), Counter(r['lang'] for r in out), Counter(r['label'] for r in out))
