"""The words of institution names and affiliation strings, as the resolver compares them: accents and HTML
entities folded, glued words cut apart, abbreviations and the many spellings of "university" expanded, stop
words, legal suffixes and numbers dropped; places (US states, country names) and the words that say what kind
of body a name is."""

from __future__ import annotations

import html
import re
import unicodedata

ABBREVIATIONS = {
    "univ": "university", "uni": "university", "universite": "university", "universidad": "university",
    "universitat": "university", "universita": "university", "universidade": "university",
    "universiteit": "university", "universitet": "university", "universitaet": "university",
    "universiti": "university", "univerzita": "university", "uniwersytet": "university",
    "universitesi": "university", "universitatea": "university", "universitas": "university",
    "univerzitet": "university", "universiteti": "university", "universitario": "university",
    "universitaria": "university", "universitaire": "university", "universitats": "university",
    "inst": "institute", "institut": "institute", "instituto": "institute", "istituto": "institute",
    "institution": "institute", "natl": "national", "nat": "national", "nacional": "national",
    "dept": "department", "dep": "department", "lab": "laboratory", "labs": "laboratory",
    "laboratories": "laboratory", "tech": "technology", "technol": "technology", "technological": "technology",
    "sci": "science", "sciences": "science", "coll": "college", "hosp": "hospital", "med": "medical",
    "medicine": "medical", "res": "research", "ctr": "center", "cntr": "center", "centre": "center",
    "cent": "center", "acad": "academy", "eng": "engineering", "engn": "engineering", "polytech": "polytechnic",
    "politecnico": "polytechnic", "polytechnique": "polytechnic", "agric": "agricultural", "agr": "agricultural",
    "agriculture": "agricultural", "int": "international", "intl": "international", "sch": "school",
    "fac": "faculty", "fed": "federal", "gen": "general", "hlth": "health", "mem": "memorial",
    "ecole": "school", "escuela": "school", "hopital": "hospital", "hospitalier": "hospital",
    "klinikum": "hospital", "centro": "center", "centrum": "center", "zentrum": "center",
    "st": "saint", "ste": "saint", "mt": "mount",
}  # fmt: skip
STOP_WORDS = frozenset(
    "of the and at in for on de del della degli des di da do dos das du la le les et und fur y e a an "
    "ltd inc co corp corporation gmbh llc plc ag sa srl bv kg limited company".split()
)
US_STATES = {
    "al": "alabama", "ak": "alaska", "az": "arizona", "ar": "arkansas", "ca": "california", "co": "colorado",
    "ct": "connecticut", "de": "delaware", "fl": "florida", "ga": "georgia", "hi": "hawaii", "id": "idaho",
    "il": "illinois", "in": "indiana", "ia": "iowa", "ks": "kansas", "ky": "kentucky", "la": "louisiana",
    "me": "maine", "md": "maryland", "ma": "massachusetts", "mi": "michigan", "mn": "minnesota",
    "ms": "mississippi", "mo": "missouri", "mt": "montana", "ne": "nebraska", "nv": "nevada",
    "nh": "new hampshire", "nj": "new jersey", "nm": "new mexico", "ny": "new york", "nc": "north carolina",
    "nd": "north dakota", "oh": "ohio", "ok": "oklahoma", "or": "oregon", "pa": "pennsylvania",
    "ri": "rhode island", "sc": "south carolina", "sd": "south dakota", "tn": "tennessee", "tx": "texas",
    "ut": "utah", "vt": "vermont", "va": "virginia", "wa": "washington", "wv": "west virginia",
    "wi": "wisconsin", "wy": "wyoming", "dc": "district of columbia",
}  # fmt: skip
COUNTRY_ALIASES = {
    "usa": "US", "u s a": "US", "us": "US", "united states of america": "US", "united states": "US",
    "uk": "GB", "u k": "GB", "united kingdom": "GB", "england": "GB", "scotland": "GB", "wales": "GB",
    "great britain": "GB", "northern ireland": "GB", "prc": "CN", "p r china": "CN", "pr china": "CN",
    "peoples republic of china": "CN", "china": "CN", "korea": "KR", "south korea": "KR",
    "republic of korea": "KR", "russia": "RU", "russian federation": "RU", "iran": "IR", "taiwan": "TW",
    "viet nam": "VN", "vietnam": "VN", "czech republic": "CZ", "eua": "US", "estados unidos": "US",
    "etats unis": "US", "czechia": "CZ", "the netherlands": "NL",
    "holland": "NL", "deutschland": "DE", "espana": "ES", "brasil": "BR", "italia": "IT", "turkiye": "TR",
}  # fmt: skip
# Words that say what kind of body a name is: rare or not, a name that has one and a string that lacks it
# are different things ("Boston" is not "Boston University").
KIND_WORDS = frozenset(
    "university college institute school hospital center laboratory academy polytechnic clinic foundation "
    "museum observatory society council agency ministry department faculty library".split()
)
KIND_WEIGHT = 2.0
# Words that name a field or a part of a body rather than a body: a match needs more than these.
GENERIC = KIND_WORDS | frozenset(
    "health medical science technology research national international general public state federal "
    "engineering education studies division unit group program graduate clinical physics chemistry biology "
    "mathematics economics management business law nursing pharmacy dentistry surgery pathology "
    "medical sciences new north south east west central".split()
)
MAX_PIECES = 3
CANDIDATES = 60


def ascii_fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", html.unescape(text))
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def unglue(text: str) -> str:
    """'ManagementUniversity of CaliforniaBerkeley' -> 'Management University of California Berkeley'
    (three lower-case letters before the capital, so 'HeFei' and 'McGill' stay whole)."""
    text = re.sub(r"(?<=[a-z]{3})(?=[A-Z][a-z])", " ", text)
    text = re.sub(r"(?<=[a-z]{3})(?=[A-Z]{2}\b)", " ", text)  # "BerkeleyCA 94720"
    return re.sub(r"(?<=\d)(?=[A-Za-z]{2})|(?<=[A-Za-z]{2})(?=\d)", " ", text)  # "94720USA"


def words(text: str) -> list[str]:
    """Normalised content words of a name or a piece of an affiliation string, in order."""
    lowered = ascii_fold(unglue(text)).lower().replace("&", " and ")
    lowered = re.sub(r"(\w)['\u2019]s\b", r"\1s", lowered)  # King's -> kings, as "Kings College" is written
    raw = re.findall(r"[a-z0-9]+", lowered)
    if len(raw) > 1 and raw[-1] == "u":  # "Ghent U.", "Boston U"
        raw[-1] = "university"
    out = []
    for token in raw:
        token = ABBREVIATIONS.get(token, token)
        if token in STOP_WORDS or token.isdigit() or len(token) < 2:
            continue
        out.append(token)
    return out


def without_note(name: str) -> str:
    """'Google (United States)' -> 'Google': a closing parenthesis ends the name (what `\\s*\\([^)]*\\)\\s*$` removed,
    found with two searches instead of a scan that is quadratic in a run of spaces or of '(')."""
    text = name.rstrip()
    if not text.endswith(")"):
        return name
    start = text.find("(", text.rfind(")", 0, len(text) - 1) + 1)
    return text[:start].rstrip() if start >= 0 else name


def pieces(text: str) -> list[str]:
    """An affiliation string cut where people separate its parts."""
    text = unglue(html.unescape(text))
    return [p.strip() for p in re.split(r"[,;\n|]+|\s[-–]\s|\s{2,}", text) if p.strip()]


def as_phrase(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", ascii_fold(text).lower()))


def trigrams_of(phrase: str) -> set[str]:
    padded = f"  {phrase} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)} if phrase else set()


def deletions_of(token: str) -> set[str]:
    return {token[:i] + token[i + 1 :] for i in range(len(token))}
