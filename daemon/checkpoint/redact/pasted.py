"""What developers paste that detect-secrets does not know: the token formats of the major platforms
(after gitleaks' rule set, gitleaks/gitleaks config/gitleaks.toml and cmd/generate/config/rules),
webhook URLs, and passwords on command lines (`curl -u`, `sshpass -p`, `mysql -pPW`, `--password X`)
and in `.netrc` files. Each entry: (kind, regex, how it runs, why), as in `detectors.ADDED`.

Token regexes are anchored on their literal prefix (the gate runs each only on texts holding it) and
bounded on both sides (a longer word holding the prefix is not a token). Command-line passwords must
be literals: `$PASS`, `${{ secrets.X }}`, `<password>` and `[PASSWORD]` are references or placeholders.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_B = r"(?<![A-Za-z0-9_])"  # the token starts a word ...
_E = r"(?![A-Za-z0-9_])"  # ... and ends one

# (kind, regex) of tokens whose prefix says what they are (case kept: the prefixes are case-exact)
PLATFORM_TOKENS: list[tuple[str, str]] = [
    ("digitalocean_token", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E),
    ("shopify_token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E),
    ("vault_token", _B + r"hv[sbr]\.[\w\-]{24,300}"),
    ("doppler_token", _B + r"dp\.(?:pt|st|ct|sa|scim|audit)\.[a-zA-Z0-9]{40,44}" + _E),
    ("linear_api_key", _B + r"lin_(?:api|oauth)_[a-zA-Z0-9]{40}" + _E),
    ("huggingface_token", _B + r"(?:hf_|api_org_)[a-zA-Z]{34}" + _E),
    ("databricks_token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    ("atlassian_token", _B + r"ATATT3[A-Za-z0-9_\-=]{186}"),
    ("postman_api_key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E),
    ("grafana_token", _B + r"(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"),
    ("sentry_token", _B + r"(?:sntry[su]_[a-zA-Z0-9+/=_]{40,})"),
    ("pulumi_token", _B + r"pul-[a-f0-9]{40}" + _E),
    ("terraform_token", _B + r"[a-zA-Z0-9]{14}\.atlasv1\.[a-zA-Z0-9\-_=]{60,70}" + _E),
    ("heroku_token", _B + r"HRKU-AA[0-9a-zA-Z_\-]{58}" + _E),
    ("newrelic_key", _B + r"NR(?:AK|JS|II)-[a-zA-Z0-9]{27,}" + _E),
    ("flyio_token", _B + r"fo1_[\w\-]{43}" + _E),
    ("supabase_token", _B + r"sb(?:p|_secret)_[a-zA-Z0-9_]{32,}" + _E),
    ("notion_token", _B + r"ntn_[0-9]{11}[A-Za-z0-9]{35}" + _E),
    ("age_secret_key", _B + r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + _E),
    ("groq_api_key", _B + r"gsk_[a-zA-Z0-9]{52}" + _E),
    ("replicate_token", _B + r"r8_[a-zA-Z0-9]{37}" + _E),
    ("perplexity_api_key", _B + r"pplx-[a-zA-Z0-9]{48}" + _E),
    ("onepassword_token", _B + r"ops_eyJ[a-zA-Z0-9+/]{250,}={0,3}"),
    ("slack_app_token", _B + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+" + _E),
    ("dropbox_token", _B + r"sl\.[a-zA-Z0-9\-=_]{135,}"),
    ("figma_token", _B + r"figd_[\w\-]{40}" + _E),
    ("planetscale_token", _B + r"pscale_(?:tkn|pw|oauth)_[\w\-=.]{32,64}" + _E),
    ("tailscale_key", _B + r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}" + _E),
    ("netlify_token", _B + r"nfp_[a-zA-Z0-9]{36}" + _E),
    ("sourcegraph_token", _B + r"sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}" + _E),
    ("rubygems_key", _B + r"rubygems_[a-f0-9]{48}" + _E),
    ("clojars_token", _B + r"CLOJARS_[a-z0-9]{60}" + _E),
    ("docker_token", _B + r"dckr_(?:pat|oat)_[a-zA-Z0-9_\-]{27,}" + _E),
    ("gitlab_token", _B + r"gl(?:pat|dt|ptt|rt|cbt|ffct|oas|imt|agent|soat)-[\w\-]{20,}" + _E),
    ("readme_key", _B + r"rdme_[a-z0-9]{70}" + _E),
    ("prefect_key", _B + r"pnu_[a-zA-Z0-9]{36}" + _E),
    ("infracost_key", _B + r"ico-[a-zA-Z0-9]{32}" + _E),
    ("easypost_key", _B + r"EZ[AT]K[a-zA-Z0-9]{54}" + _E),
    ("flutterwave_key", _B + r"FLW(?:PUB|SEC)K_TEST-[a-hA-H0-9]{32}-X" + _E),
    ("duffel_token", _B + r"duffel_(?:test|live)_[a-zA-Z0-9_\-=]{43}" + _E),
    ("alibaba_key", _B + r"LTAI[a-zA-Z0-9]{20}" + _E),
    ("azure_ad_client_secret", r"(?<![\w~.\-])[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.\-]{31,34}(?![\w~.\-])"),
    ("square_token", _B + r"(?:EAAA|sq0atp-)[\w\-]{22,60}" + _E),
    ("mailgun_key", _B + r"key-[a-f0-9]{32}" + _E),
]

# Webhook URLs: the URL is the credential (anyone holding it can post).
WEBHOOKS: list[tuple[str, str]] = [
    ("discord_webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{20,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}"),
    ("teams_webhook", r"https://[\w\-]+\.webhook\.office\.com/webhookb2/[\w\-@/]{40,}"),
    ("teams_webhook", r"https://outlook\.office(?:365)?\.com/webhook/[\w\-@/]{40,}"),
    ("teams_webhook", r"https://[\w\-.]+\.logic\.azure\.com(?::443)?/workflows/[\w/\-?=&%.]*?sig=[\w\-%]{20,}"),
]

_PLACEHOLDER_VALUE = (  # compiled on first use (`_placeholder_value`): a process that never redacts never pays
    r"""^["']?(?:\$|%|<|\[|\{\{|\*{3}|x{3}|\.{3})|[>\]}]["']?$|^["']?(?:password|passwd|pass|pwd|secret|token|changeme|changeit|test|"""
    r"""xxx+|\*+|\.\.\.|none|null)["']?$"""
)


@cache
def _placeholder_value() -> re.Pattern[str]:
    return re.compile(_PLACEHOLDER_VALUE, re.IGNORECASE)


def _literal_password(m: re.Match[str]) -> bool:
    """A password given on a command line, not a reference ($PASS, ${{ x }}, $(cat f)) or a placeholder."""
    value = m.group("secret")
    bare = value.strip("'\"")
    if bare.isdigit() or (bare.replace(":", "").isdigit()):
        return False  # docker run -u 1000:1000 is a uid and a gid
    if len(set(bare.lower())) < 4:
        return False  # xxx, yyyy, aaaa: a placeholder
    placeholder = _placeholder_value()
    return len(bare) >= 3 and placeholder.search(value) is None and placeholder.search(bare) is None


_QUOTED_OR_WORD = r"""(?P<secret>'[^'\n]+'|"[^"\n]+"|[^\s'"`;&|<>()]+)"""

# Passwords on command lines and in .netrc: (kind, regex, how it runs), all run on the lowered text.
COMMAND_LINE: list[tuple[str, str, dict[str, Any]]] = [
    # curl -u user:pw / --user 'user:pw' / -u ":pw" (an empty user) / --user "user":"pw"; the password goes
    ("password_on_command_line",
     r"""(?<![\w\-])(?:-u|--user|--proxy-user)(?:=|[ \t]+)["']?[^\s:"'$/]*["']?:"""
     r"""(?P<secret>(?!//)(?:"[^"\s]+"|'[^'\s]+'|[^\s"']+))""",
     {"trigger": r"(?<![\w\-])(?:-u|--user|--proxy-user)[ =\t]", "before": 0, "after": 400}),
    # -u "token:" (a token as the user, no password: how many APIs take a key)
    ("password_on_command_line",
     r"""(?<![\w\-])(?:-u|--user)(?:=|[ \t]+)(?P<q>["']?)(?P<secret>[^\s:"'$/]{8,}):(?P=q)(?=\s|$)""",
     {"trigger": r"(?<![\w\-])(?:-u|--user)[ =\t]", "before": 0, "after": 400, "check": None}),
    # -H 'Authorization: Token x', -H "X-Api-Key: x", --header "apikey: x" (bearer and basic: see ADDED)
    ("header_credential",
     r"""(?<![\w\-])(?:-h|--header)(?:=|[ \t]+)["'](?:authorization[ \t]*:[ \t]*(?:(?:token|api-token)[ \t]+)?"""
     r"""|(?:x-(?:[a-z]+-)?)?(?:api-?)?(?:key|token)[ \t]*:[ \t]*)(?P<secret>[\w=~@.+/\-]{8,})""",
     {"trigger": r"(?<![\w\-])(?:-h|--header)[ =\t]", "before": 0, "after": 600}),
    # sshpass -p 'pw', docker/podman/helm/oras login -p pw
    ("password_on_command_line",
     r"""(?:sshpass|login)\b[^\n]*?[ \t]-p[ \t]+""" + _QUOTED_OR_WORD,
     {"trigger": r"sshpass|login", "before": 0, "after": 400}),
    # mysql -pPW (no space: with one, mysql prompts and the next word is the database)
    ("password_on_command_line",
     r"""\bmysql(?:dump|admin|sh|import|check|binlog)?\b[^\n]*?[ \t]-p(?P<secret>'[^'\n]+'|"[^"\n]+"|"""
     r"""[^\s'"`;&|<>()\-][^\s'"`;&|<>()]*)""",
     {"trigger": r"mysql", "before": 0, "after": 400, "lower": False}),  # case kept: -P is the port
    # --password pw, --passwd pw, --db-password pw (the `=` form is secret_assignment's)
    ("password_on_command_line",
     r"""(?<![\w\-])--[\w\-]*pass(?:word|wd)?[ \t]+""" + _QUOTED_OR_WORD,
     {"trigger": r"--[\w\-]*pass", "before": 0, "after": 400}),
    # .netrc: machine host login user password pw (on one line or several)
    ("netrc_password",
     r"""\bmachine[ \t]+\S+\s+(?:login[ \t]+\S+\s+)?(?:account[ \t]+\S+\s+)?password[ \t]+(?P<secret>\S+)""",
     {"trigger": r"machine", "before": 0, "after": 400}),
]


def _varied(m: re.Match[str]) -> bool:
    """Not a placeholder of the format (hvs.xxxx...): real tokens are random."""
    return len(set(m.group())) >= 10


def _twilio_check(m: re.Match[str]) -> bool:
    """Hex that reads as random (a run of zeros with one letter is a placeholder, not a token)."""
    value = m.group()
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and len(set(value)) >= 10


# (kind, pattern, how it runs, why) for detectors.ADDED
PASTED: list[tuple[str, str, dict[str, Any], str]] = [
    *((kind, pattern, {"check": _varied},
       "a platform token by its prefix (gitleaks' rule set); detect-secrets lacks it")
      for kind, pattern in PLATFORM_TOKENS),
    *((kind, pattern, {"flags": re.IGNORECASE}, "a webhook URL: the URL is the credential")
      for kind, pattern in WEBHOOKS),
    *((kind, pattern, {"lower": True, "check": _literal_password, **run, "group": "secret"},
       "a password on a command line or in .netrc: detect-secrets knows only assignments")
      for kind, pattern, run in COMMAND_LINE),
    # A Twilio auth token is 32 hex characters with no prefix (kind hex_api_key, as prose.py's Datadog and
    # auth-token detectors, which may find the same span): near the word twilio (a client built
    # with the account SID and the token positionally, a TWILIO_* line), not inside an AC/SK id.
    ("hex_api_key", r"(?<![0-9a-z])[0-9a-f]{32}(?![0-9a-z])",
     {"lower": True, "trigger": r"twilio", "before": 200, "after": 400, "check": _twilio_check},
     "Twilio auth tokens have no prefix: detect-secrets knows only the SK api keys"),
    # ... or near the account SID, the client's first argument: found in the same pass as the SID (looked
    # for near the word twilio only, it took a second pass, which saw the word in the SID's placeholder).
    ("hex_api_key", r"(?<![0-9a-z])[0-9a-f]{32}(?![0-9a-z])",
     {"lower": True, "trigger": r"ac[0-9a-f]{32}", "before": 200, "after": 400, "check": _twilio_check,
      "gate": r"(?i)ac[0-9a-f]{32}"},  # the SID's shape: its anchor `ac` is in nearly every text
     "Twilio auth tokens next to the account SID (Client('AC...', '<token>'))"),
]
