# helper-session judgements, batch 2: index in missing2_2026-12-03.jsonl (chunks of the current sample whose ids were
# not in judged.jsonl) -> phrases judged relevant; every other phrase of that chunk's to_judge list judged NOT relevant
DEC = {
 0: ["authenticatie", "erfgoedkijker", "nde", "nde termennetwerk", "shacl-validatie", "termennetwerk"],
 1: ["docker", "kubernetes-cluster", "npm", "productie-build", "server-side component", "termennetwerk graphql",
     "termennetwerk-api"],
 2: ["collectie nederland", "csv", "jsonl", "logbestand", "mit-licentie", "oai-output", "volledige oai-output"],
 3: ["br-aguila", "branch library", "maricopa"],
 4: ["bpl-north boulder", "corner library"],
 5: ["dict", "modèle pydantic", "réponse dict"],
 6: ["l’ordre tags", "métadonnées tags"],
 7: ["corps", "paramètres requête", "query", "seul paramètre"],
 8: ["extras all", "installer pydantic-settings", "pydantic-settings"],
 9: [], 10: [],
 11: ["nginx", "renouvellement certificats", "termination proxy", "tls"],
 12: ["fastapi", "uv"],
 13: ["corps", "modèles pydantic", "paramètres body", "paramètres multiples", "valeurs singulières"],
 14: ["basesettings", "l'objet settings", "modèles pydantic", "pydantic", "sous-classe"],
}
DEC.update({
 15: ["doppelte header", "x-token"],
 16: ["backgroundtask", "dependency injection"],
 17: ["automatische api-dokumentation", "django rest"],
 18: ["anwendungsserver", "proxy", "proxy-forwarded-header", "proxy-forwarded-header funktionieren", "x-forwarded-host"],
 19: ["abhängigkeit", "scope", "yield"],
 20: ["myapp", "myapp py"],
 21: ["anwendungsserver", "forwarded-allow-ips", "forwarded-header", "proxy", "proxy-header", "tls-terminierungsproxy",
      "uvicorn"],
})
