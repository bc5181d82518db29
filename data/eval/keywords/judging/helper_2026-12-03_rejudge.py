# helper-session blind re-judgement of phrases the method's author judged on 2026-12-02 (for inter-judge agreement);
# chunk id -> (phrases judged, phrases of them judged relevant). Judged from the chunk text and the alphabetically
# sorted candidates only, without the earlier 'relevant' list.
REJ = {
 "erfgoedkijker/README.md#nde-erfgoedkijker#000": (
  ['applicatiebeheerder', 'bekijken', 'erfgoedinstelling', 'erfgoedobject', 'json-ld', 'linked data', 'rdf-xml', 'toont', 'turtle', 'uri'],
  ['applicatiebeheerder', 'erfgoedinstelling', 'erfgoedobject', 'json-ld', 'linked data', 'rdf-xml', 'turtle']),
 "erfgoedkijker/README.md#nde-erfgoedkijker/docker/detached-draaien#000": (
  ['alpine-container', 'd naam', 'detached draaien', 'health-check', 'health-check gebruikt', 'herstartbeleid', 'localhost', 'localhost alpine-container', 'service start'],
  ['alpine-container', 'detached draaien', 'health-check', 'herstartbeleid', 'localhost']),
 "claude-to-sqlite/tests/artifacts.json#91098bc8-f2c4-427b-b71b-1e25efa2e871/5e3e08cb-7e91-44fc-a2bb-6abacba3cb71#001": (
  ['calculator', 'cents', 'code', 'dollars', 'input', 'output tokens', 'readability', 'responsive', 'updates real-time', 'white'],
  ['calculator', 'output tokens']),
 "fastapi/fr/metadata.md#métadonnées-et-url-des-documents/métadonnées-pour-les-tags#000": (
  ['apirouter', 'consultez documents', "d'accès", 'l’intérieur', 'l’ordre tags', 'métadonnées', 'métadonnées tags', 'tags utilisez', 'users', 'utiliser'],
  ['l’ordre tags', 'métadonnées', 'métadonnées tags']),
 "fastapi/fr/handling-errors.md#gérer-les-erreurs/remplacer-les-gestionnaires-d-exception-par-défa/réutiliser-les-gestionnaires-d-exception-de-fast#000": (
  ["d'afficher l'erreur", "d'exception défaut", "d'exception fastapi", 'expressif voyez', 'fastapi', 'fastapi exemple', "gestionnaires d'exception", "l'erreur message", 'réutiliser gestionnaires', 'simplement réutiliser', "utiliser l'exception"],
  ['fastapi', "gestionnaires d'exception", 'réutiliser gestionnaires']),
 "fastapi/fr/features.md#fonctionnalités/fonctionnalités-de-pydantic#000": (
  ['base données', 'complexes', 'directement', 'données', 'fonctionnalités', 'json', 'linter', "passer l'objet", 'types python'],
  ['base données', 'types python']),
 "fastapi/fr/bigger-applications.md#créer-des-applications-plus-grandes-plusieurs-fi/inclure-un-apirouter-dans-un-autre#000": (
  ['ajoutés', 'apirouter', 'chemin', "chemins d'accès", 'définitions', 'fastapi', 'inclure', 'inclure apirouter', 'openapi', 'router', 'router routes', 'routes routeurs'],
  ['apirouter', "chemins d'accès", 'fastapi', 'inclure apirouter', 'router']),
 "fastapi/de/index.md#fastapi/abhängigkeiten#000": (
  ['abhängigkeiten', 'add fastapi', 'fastapi-cloud-cli', 'installieren', 'optionalen abhängigkeiten', 'orjson', 'pydantic-settings', 'standard', 'standard-no-fastapi-cloud-cli', 'uv add', 'verwaltung', 'zusätzliche optionale'],
  ['abhängigkeiten', 'fastapi-cloud-cli', 'optionalen abhängigkeiten', 'orjson', 'pydantic-settings', 'standard-no-fastapi-cloud-cli', 'uv add']),
 "fastapi/de/behind-a-proxy.md#hinter-einem-proxy/proxy-mit-einem-abgetrennten-pfadpräfix#000": (
  ['fastapi', 'gibt', 'hinzufügen', 'json', 'openapi json', 'openapi-schema', 'pfad app', 'pfadpräfix', 'proxy', 'proxy pfadpräfix', 'uvicorn'],
  ['fastapi', 'openapi-schema', 'pfadpräfix', 'proxy', 'proxy pfadpräfix', 'uvicorn']),
 "fastapi/de/index.md#fastapi/beispielaktualisierung/alternative-api-dokumentation-aktualisieren#000": (
  ['aktualisieren', 'alternative', 'api-dokumentation aktualisieren', 'body', 'dokumentation ebenfalls', 'ebenfalls neuen', 'query-parameter body', 'redoc', 'widerspiegeln redoc'],
  ['api-dokumentation aktualisieren', 'redoc']),
}
