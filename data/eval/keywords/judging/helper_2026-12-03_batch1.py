# helper-session judgements, batch 1: index in /tmp/kwjudge_missing.jsonl -> phrases judged relevant
# (every other phrase of that chunk's to_judge list judged NOT relevant)
DEC = {
 0: ["amsterdam", "dump csv", "harvester", "jsonl", "state json"],
 1: [], 2: ["yucca"], 3: ["bernardino"], 4: [], 5: ["public library"],
 6: [], 7: ["junction city", "memorial library"], 8: ["currie street", "woolfolk library"],
 9: ["los angeles", "monrovia reads"], 10: ["public library"], 11: [], 12: [], 13: ["ppld-monument library"],
 14: ["county library", "wynne"], 15: [], 16: [], 17: ["oxnard", "public library"], 18: ["cholla library"],
 19: [], 20: [],
}
DEC.update({
 21: ["déclarations types", "python"], 22: ["déclarations types", "python"], 23: [], 24: [], 25: [], 26: [], 27: [],
 28: [], 29: ["pydantic"], 30: ["pydantic"], 31: ["en-têtes transférés", "x-forwarded-proto"], 32: [], 33: [],
 34: [], 35: ["dependency injection", "django rest"], 36: ["verwendete literatur"], 37: [], 38: [],
 39: ["fehlerhandler", "httpexception", "klartext-response", "requestvalidationerror"], 40: ["vertikalen strich"],
 41: [], 42: [], 43: [], 44: ["htmlresponse", "interaktiven dokumentation", "response objekt"],
 45: ["main py", "offizielle erweiterung"],
})
