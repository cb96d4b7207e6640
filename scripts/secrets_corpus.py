"""Two corpora of secrets and the detection rate of Checkpoint's redaction on each, and its false
positives on benign text and on the real sample transcripts.

- "own": fake secrets in the shapes real ones have, in the places transcripts hold them, written for
  these detectors. Every value is made up at run time from a seeded generator (prefixes are joined to
  random bodies, so no real or even static key-shaped string sits in this file).
- "gitleaks": the literal test cases of gitleaks' rules (tests/data/gitleaks_cases.json, with the
  repository, path and commit of each rule file): secrets and near misses written by someone else.
  Detected: something in the case was redacted; a benign case is a false positive when anything is.
- "samples": every line of the real public transcripts (/work/shared/samples and tests/data, which
  their sources sanitised): what is redacted there is counted, by kind, as benign false positives.

Used by tests/unit/redact/test_redact.py and tests/e2e/test_privacy.py; run it to print the figures, for
the detectors of this checkout or, with --baseline REV, of a git revision (its daemon/ is read with
`git archive` into a temporary directory and this script runs again against it):

    .venv/bin/python -m scripts.secrets_corpus [--seed N] [--per-type N] [--baseline REV]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import random
import string
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
LOWER_HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


@dataclass(frozen=True)
class Secret:
    kind: str  # the type it is counted under
    value: str  # the sensitive part: must not survive redaction
    text: str  # the value in its context, as a transcript would hold it


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    body = "".join(rng.choice(alphabet) for _ in range(n))
    if n >= 8 and not any(c.isdigit() for c in body) and any(c.isdigit() for c in alphabet):
        body = body[:-1] + rng.choice(string.digits)  # real keys of this length hold a digit
    return body


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# -- values -------------------------------------------------------------------------------------------

def aws_access_key(rng: random.Random) -> str:
    return rng.choice(["AK" + "IA", "AS" + "IA"]) + _r(rng, UPPER, 16)


def aws_secret(rng: random.Random) -> str:
    return _r(rng, B64, 40)


def github_token(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return "github" + "_pat_" + _r(rng, ALNUM, 22) + "_" + _r(rng, ALNUM, 59)
    return rng.choice(["gh" + "p", "gh" + "o", "gh" + "u", "gh" + "s"]) + "_" + _r(rng, ALNUM, 36)


def gitlab_token(rng: random.Random) -> str:
    return "gl" + "pat-" + _r(rng, ALNUM + "_-", 20)


def anthropic_key(rng: random.Random) -> str:
    return "sk-" + "ant-" + rng.choice(["api03", "admin01"]) + "-" + _r(rng, B64URL, 93) + "AA"


def openai_key(rng: random.Random) -> str:
    marker = "T3Blbk" + "FJ"
    if rng.random() < 0.5:
        return "sk-" + _r(rng, ALNUM, 20) + marker + _r(rng, ALNUM, 20)
    return "sk-" + "proj-" + _r(rng, B64URL, 74) + marker + _r(rng, B64URL, 74)


def slack_token(rng: random.Random) -> str:
    kind = rng.choice(["b", "p", "a"])
    return f"xox{kind}-" + _r(rng, string.digits, 12) + "-" + _r(rng, string.digits, 13) + "-" + _r(rng, ALNUM, 24)


def slack_webhook(rng: random.Random) -> str:
    return ("https://hooks." + "slack.com/services/T" + _r(rng, UPPER, 8) + "/B" + _r(rng, UPPER, 8) + "/"
            + _r(rng, ALNUM, 24))


def google_api_key(rng: random.Random) -> str:
    return "AI" + "za" + _r(rng, B64URL, 35)


def stripe_key(rng: random.Random) -> str:
    return rng.choice(["sk", "rk"]) + "_live_" + _r(rng, ALNUM, 24)


def sendgrid_key(rng: random.Random) -> str:
    return "SG" + "." + _r(rng, B64URL, 22) + "." + _r(rng, B64URL, 43)


def npm_token(rng: random.Random) -> str:
    return "np" + "m_" + _r(rng, ALNUM, 36)


def pypi_token(rng: random.Random) -> str:
    return "pypi-" + "AgEIcHlwaS5vcmc" + _r(rng, B64URL, 80)


def twilio_key(rng: random.Random) -> str:
    return "S" + "K" + _r(rng, LOWER_HEX, 32)


def azure_key(rng: random.Random) -> str:
    return _r(rng, B64, 86) + "=="


def telegram_token(rng: random.Random) -> str:
    return _r(rng, string.digits, 9) + ":AA" + _r(rng, B64URL, 33)


def jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": _r(rng, string.digits, 10), "name": _r(rng, string.ascii_letters, 8),
                                  "iat": rng.randint(1_600_000_000, 1_800_000_000)}).encode())
    return f"{header}.{payload}.{_b64url(rng.randbytes(32))}"


def password(rng: random.Random) -> str:
    return _r(rng, ALNUM, rng.randint(10, 20)) + rng.choice("!#%^*~")


def pem_body(rng: random.Random, lines: int) -> list[str]:
    return [_r(rng, B64, 64) for _ in range(lines)] + [_r(rng, B64, rng.randint(8, 60)) + "=="]


# -- contexts -----------------------------------------------------------------------------------------

def _token_contexts(value: str, name: str) -> list[str]:
    """Where a token-shaped secret shows up in a session."""
    return [
        f"Here is the {name} for staging: {value} (rotate it after the demo).",
        f"[tool Bash] {{\"command\": \"curl -s -H 'X-Api-Key: {value}' https://api.example.com/v1/me\"}}",
        f"[tool result]\n{{\n  \"name\": \"ci\",\n  \"credential\": \"{value}\",\n  \"scopes\": [\"repo\"]\n}}",
        f"```python\nclient = Client(\"{value}\")\n```",
        f"config.yaml:\n  service:\n    endpoint: https://api.example.com\n    auth: {value}\n",
        f"I pasted it into the terminal:\n$ deploy --auth={value} --env=prod",
    ]


def _make(kind: str, value: str, name: str) -> list[Secret]:
    return [Secret(kind, value, text) for text in _token_contexts(value, name)]


Maker = Callable[[random.Random], list[Secret]]


def _tokens(kind: str, make: Callable[[random.Random], str], name: str) -> Maker:
    return lambda rng: _make(kind, make(rng), name)


def _aws_secret(rng: random.Random) -> list[Secret]:
    key = aws_access_key(rng)
    s1, s2, s3, s4 = (aws_secret(rng) for _ in range(4))
    return [
        Secret("aws_secret_access_key", s1, f"[default]\naws_access_key_id = {key}\naws_secret_access_key = {s1}\n"),
        Secret("aws_secret_access_key", s2, f"export AWS_SECRET_ACCESS_KEY={s2}"),
        Secret("aws_secret_access_key", s3,
               f'session = boto3.Session(aws_access_key_id="AKID", aws_secret_key="{s3}")'),
        Secret("aws_secret_access_key", s4, f'{{"AWS_SECRET_ACCESS_KEY": "{s4}", "region": "eu-west-1"}}'),
    ]


def _private_keys(rng: random.Random) -> list[Secret]:
    out = []
    for label in ("RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"):
        body = pem_body(rng, rng.randint(4, 25))
        block = f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----"
        out.append(Secret("private_key", "\n".join(body[:2]), f"cat ~/.ssh/id:\n{block}\nthat is the key"))
        # inside JSON (a service account file): newlines escaped
        escaped = block.replace("\n", "\\n")
        out.append(Secret("private_key", body[1],
                          f'{{"type": "service_account", "private_key": "{escaped}\\n", "client_email": "x@y.iam"}}'))
    # cut off before its END line (a truncated tool output)
    body = pem_body(rng, 6)
    out.append(Secret("private_key", body[3], "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body[:5]) + "\n"))
    body = pem_body(rng, 6)
    putty = ("PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: imported\nPublic-Lines: 2\n"
             + "\n".join(body[:2]) + "\nPrivate-Lines: 3\n" + "\n".join(body[2:5]) + "\nPrivate-MAC: "
             + _r(rng, LOWER_HEX, 40))
    out.append(Secret("private_key", body[3], putty))
    return out


def _urls(rng: random.Random) -> list[Secret]:
    out = []
    for scheme, host in (("postgres", "db.internal:5432/app"), ("https", "git.example.com/org/repo.git"),
                         ("mongodb+srv", "cluster0.example.net/test"), ("redis", "cache:6379/0"),
                         ("amqp", "mq.example.com:5672/vhost")):
        pw = password(rng).replace("#", "x").replace("%", "x")
        out.append(Secret("password_in_url", pw, f"DATABASE_URL used by the app: {scheme}://admin:{pw}@{host}"))
    return out


def _env(rng: random.Random) -> list[Secret]:
    out = []
    for name in ("DB_PASSWORD", "STRIPE_WEBHOOK_SECRET", "SENTRY_AUTH_TOKEN", "OPENWEATHER_API_KEY",
                 "SMTP_PASS", "JWT_SIGNING_KEY", "REDIS_PASSWORD", "SLACK_BOT_TOKEN"):
        v1, v2, v3 = password(rng), _r(rng, ALNUM, 32), password(rng)
        out.append(Secret("env_assignment", v1, f"# .env\nNODE_ENV=production\n{name}={v1}\nPORT=8080\n"))
        out.append(Secret("env_assignment", v2, f"export {name}={v2}"))
        out.append(Secret("env_assignment", v3, f"docker run -e {name}='{v3}' -p 8080:8080 app:latest"))
    return out


def _assignments(rng: random.Random) -> list[Secret]:
    out = []
    for name in ("access_token", "refresh_token", "client_secret", "api_key", "github_token", "apiKey",
                 "password", "db_password", "secret_key", "webhook_secret"):
        v1, v2, v3, v4 = _r(rng, ALNUM, 24), _r(rng, ALNUM, 28), password(rng), _r(rng, ALNUM, 20)
        out.append(Secret("assignment", v1, f'{{"{name}": "{v1}", "expires_in": 3600}}'))
        out.append(Secret("assignment", v2, f'settings.{name} = "{v2}"'))
        out.append(Secret("assignment", v3, f"{name}: {v3}\n"))
        out.append(Secret("assignment", v4, f"const {name} = '{v4}';"))
        v5, v6 = _r(rng, ALNUM, 24), password(rng).replace("#", "x")
        out.append(Secret("assignment", v5, f"GET https://api.example.com/v1/items?page=2&{name}={v5}&limit=50"))
        out.append(Secret("assignment", v6, f"$ tool login --{name.replace('_', '-')}={v6} --verbose"))
    return out


def _bearer(rng: random.Random) -> list[Secret]:
    out = []
    for _ in range(4):
        v = _r(rng, ALNUM + "-._~", 40)
        out.append(Secret("bearer_token", v, f"curl -H 'Authorization: Bearer {v}' https://api.example.com/v2/users"))
    v = base64.b64encode(f"deploy:{password(rng)}".encode()).decode()
    out.append(Secret("bearer_token", v, f"Authorization: Basic {v}"))
    return out


def _private_tags(rng: random.Random) -> list[Secret]:
    out = []
    for _ in range(4):
        v = " ".join(_r(rng, string.ascii_lowercase, rng.randint(3, 9)) for _ in range(rng.randint(3, 12)))
        out.append(Secret("private", v, f"My notes: <private>{v}</private> and then the rest of the prompt."))
    v = _r(rng, string.ascii_lowercase, 12)
    out.append(Secret("private", v, f"Before\n<private>\nline one {v}\n</private>\nafter"))
    v = _r(rng, string.ascii_lowercase, 12)
    out.append(Secret("private", v, f"an unclosed tag <private>keeps {v} hidden to the end"))
    return out


def _azure(rng: random.Random) -> list[Secret]:
    v = azure_key(rng)
    return [Secret("azure_storage_key", v,
                   f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={v};EndpointSuffix=core.windows.net")]


def _npm(rng: random.Random) -> list[Secret]:
    v = npm_token(rng)
    npmrc = f"~/.npmrc:\n//registry.npmjs.org/:_authToken={v}\n"
    return [Secret("npm_token", v, npmrc), *_make("npm_token", v, "npm token")]


def _hex(rng: random.Random, n: int) -> str:
    return _r(rng, LOWER_HEX, n)


PLATFORM_TOKENS: dict[str, Callable[[random.Random], str]] = {
    "digitalocean_token": lambda rng: "do" + rng.choice("opr") + "_v1_" + _hex(rng, 64),
    "shopify_token": lambda rng: "shp" + rng.choice(["at", "ss", "ca", "pa"]) + "_" + _hex(rng, 32),
    "vault_token": lambda rng: "hv" + "s." + "CAES" + _r(rng, B64URL, 91),
    "doppler_token": lambda rng: "dp" + ".pt." + _r(rng, ALNUM, 43),
    "linear_api_key": lambda rng: "lin" + "_api_" + _r(rng, ALNUM, 40),
    "huggingface_token": lambda rng: "h" + "f_" + _r(rng, string.ascii_letters, 34),
    "databricks_token": lambda rng: "da" + "pi" + _hex(rng, 32),
    "atlassian_token": lambda rng: "ATAT" + "T3" + _r(rng, B64URL, 186),
    "postman_api_key": lambda rng: "PM" + "AK-" + _hex(rng, 24) + "-" + _hex(rng, 34),
    "grafana_token": lambda rng: "gl" + "sa_" + _r(rng, ALNUM, 32) + "_" + _hex(rng, 8),
    "sentry_token": lambda rng: "sntr" + "ys_" + _r(rng, B64, 60),
    "pulumi_token": lambda rng: "pu" + "l-" + _hex(rng, 40),
    "terraform_token": lambda rng: _r(rng, ALNUM, 14) + ".atlas" + "v1." + _r(rng, B64URL, 64),
    "newrelic_key": lambda rng: "NR" + "AK-" + _r(rng, UPPER, 27),
    "supabase_token": lambda rng: "sb" + "p_" + _hex(rng, 40),
    "groq_api_key": lambda rng: "gs" + "k_" + _r(rng, ALNUM, 52),
    "docker_token": lambda rng: "dckr" + "_pat_" + _r(rng, B64URL, 27),
    "tailscale_key": lambda rng: "tskey" + "-auth-" + _r(rng, ALNUM, 12) + "-" + _r(rng, ALNUM, 30),
    "age_secret_key": lambda rng: "AGE-SECRET" + "-KEY-1" + _r(rng, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "mailgun_key": lambda rng: "ke" + "y-" + _hex(rng, 32),
}


def _platform(kind: str, make: Callable[[random.Random], str]) -> Maker:
    def maker(rng: random.Random) -> list[Secret]:
        value = make(rng)
        env = kind.upper()
        return [*_make(kind, value, kind.replace("_", " ")),
                Secret(kind, value, f"export {env}={value}"),
                Secret(kind, value, f"{{\"{kind}\": \"{value}\"}}")]
    return maker


def _webhooks(rng: random.Random) -> list[Secret]:
    discord = ("https://discord" + ".com/api/webhooks/" + _r(rng, string.digits, 18) + "/"
               + _r(rng, B64URL, 68))
    teams = ("https://contoso.webhook" + ".office.com/webhookb2/" + _hex(rng, 8) + "-" + _hex(rng, 4) + "-"
             + _hex(rng, 4) + "@" + _hex(rng, 8) + "/IncomingWebhook/" + _hex(rng, 32) + "/" + _hex(rng, 8))
    return [
        Secret("webhook", discord, f"curl -X POST -d '{{\"content\":\"hi\"}}' {discord}"),
        Secret("webhook", discord, f"DISCORD_HOOK={discord}"),
        Secret("webhook", teams, f"Post the alert to {teams} when the build fails."),
        Secret("webhook", teams, f'{{"teams_url": "{teams}"}}'),
    ]


def _command_lines(rng: random.Random) -> list[Secret]:
    """Passwords as developers type them on command lines and in .netrc (the shapes of issue 19)."""
    pw = [password(rng).replace("!", "x") for _ in range(10)]
    twilio_sid, twilio_token = "A" + "C" + _hex(rng, 32), _hex(rng, 32)
    return [
        Secret("command_line", pw[0], f"curl -u admin:{pw[0]} https://jenkins.internal/api/json"),
        Secret("command_line", pw[1], f"curl --user 'deploy:{pw[1]}' -X POST https://api.example.com/v1/hooks"),
        Secret("command_line", pw[2], f"sshpass -p '{pw[2]}' ssh root@10.0.0.5 uptime"),
        Secret("command_line", pw[3], f"mysql -h db.internal -u root -p{pw[3]} app < dump.sql"),
        Secret("command_line", pw[4], f"PGPASSWORD={pw[4]} psql -h db -U app -c 'select 1'"),
        Secret("command_line", pw[5], f"mongosh --host db --username admin --password {pw[5]}"),
        Secret("command_line", pw[6], f"docker login -u ci -p {pw[6]} registry.example.com"),
        Secret("command_line", pw[7],
               f"cat ~/.netrc\nmachine api.heroku.com\n  login me@example.com\n  password {pw[7]}\n"),
        Secret("command_line", pw[8], f"machine github.com login bot password {pw[8]}"),
        Secret("command_line", pw[9], f"redis-cli -u redis://:{pw[9]}@cache.internal:6379/0 ping"),
        Secret("command_line", twilio_token,
               f"client = twilio.rest.Client('{twilio_sid}', '{twilio_token}')"),
    ]


# -- secrets said in sentences (issue 32): each kind in prose the offline extractor keeps ("We'll use ...
# for the staging API."), quoted, in code, at other lengths, and base64-wrapped where that is how it travels.

PROSE = "We'll use {} for the staging API."


def spoken_password(rng: random.Random, n: int = 0) -> str:
    """A password as people pick them: words, digits and symbols mixed (Tr0ub4dor&3-Gx...)."""
    n = n or rng.randint(9, 24)
    body = [rng.choice(string.ascii_uppercase), rng.choice(string.ascii_lowercase), rng.choice(string.digits),
            rng.choice("&-!#%^*~@_")]
    body += [rng.choice(ALNUM + "&-!#%^*~@_") for _ in range(n - 4)]
    rng.shuffle(body)
    return rng.choice(string.ascii_letters) + "".join(body)


def _spoken_passwords(rng: random.Random) -> list[Secret]:
    pw = [spoken_password(rng, n) for n in (8, 12, 16, 24, 0, 0, 0, 0, 0, 0)]
    return [
        Secret("password_in_prose", pw[0], f"We'll use the password {pw[0]} for the staging database."),
        Secret("password_in_prose", pw[1], f"The password is {pw[1]}, so we'll use it for the staging API."),
        Secret("password_in_prose", pw[2], f'We\'ll use the password "{pw[2]}" for the staging database.'),
        Secret("password_in_prose", pw[3], f"Set the admin password to '{pw[3]}' before the demo."),
        Secret("password_in_prose", pw[4], f"We'll use passphrase {pw[4]} for the backup key."),
        Secret("password_in_prose", pw[5], f"I changed the root password to {pw[5]} yesterday."),
        Secret("password_in_prose", pw[6], f"We decided the database password will be {pw[6]} for now."),
        Secret("password_in_prose", pw[7], f"# staging\n# password: {pw[7]}\n"),
        Secret("password_in_prose", pw[8], f"login(user='admin', password='{pw[8]}')"),
        Secret("password_in_prose", pw[9], f"The Wi-Fi password was {pw[9]}."),
    ]


def google_oauth_secret(rng: random.Random) -> str:
    return "GOC" + "SPX-" + _r(rng, B64URL, 28)


def _google_oauth_secrets(rng: random.Random) -> list[Secret]:
    v = [google_oauth_secret(rng) for _ in range(3)]
    client_id = _r(rng, string.digits, 12) + "-" + _r(rng, string.ascii_lowercase + string.digits, 32)
    return [
        *_make("google_oauth_secret", v[0], "OAuth client secret"),
        Secret("google_oauth_secret", v[1], PROSE.format(v[1])),
        Secret("google_oauth_secret", v[2],
               f'{{"installed": {{"client_id": "{client_id}.apps.googleusercontent.com", '
               f'"client_secret": "{v[2]}"}}}}'),
    ]


def _base64_envs(rng: random.Random) -> list[Secret]:
    """A .env (or a credentials JSON) base64-encoded: a Kubernetes secret, a CI variable, a pasted blob."""
    out = []
    for n in range(6):
        pw, live = password(rng), "sk" + "_live_" + _r(rng, ALNUM, 24)
        env = f"NODE_ENV=production\nDB_PASSWORD={pw}\nSTRIPE_SECRET_KEY={live}\n"
        if n == 1:
            env = json.dumps({"user": "deploy", "password": pw, "stripe": live})
        if n == 2:
            env = "# app\n" * rng.randint(0, 2) + env  # the keyword at another offset: another alignment
        blob = base64.b64encode(env.encode()).decode()
        if n == 3:
            blob = blob.rstrip("=")
        if n == 4:
            wrapped = "\n".join(blob[i:i + 76] for i in range(0, len(blob), 76))
            out.append(Secret("base64_env", blob[:76], f"apiVersion: v1\nkind: Secret\ndata:\n  .env: |\n{wrapped}\n"))
            continue
        texts = [PROSE.format(blob), f"echo {blob} | base64 -d > .env", f"data:\n  .env: {blob}\n",
                 f'{{"ENV_FILE": "{blob}"}}', PROSE.format(blob), PROSE.format(f"`{blob}`")]
        out.append(Secret("base64_env", blob, texts[n]))
    return out


def vault_legacy_token(rng: random.Random) -> str:
    body = [rng.choice(string.ascii_uppercase), rng.choice(string.ascii_lowercase), rng.choice(string.digits)]
    body += [rng.choice(ALNUM) for _ in range(21)]
    rng.shuffle(body)
    return "s" + "." + "".join(body)


def _vault_legacy(rng: random.Random) -> list[Secret]:
    v = [vault_legacy_token(rng) for _ in range(5)]
    return [
        Secret("vault_legacy_token", v[0], PROSE.format(v[0])),
        Secret("vault_legacy_token", v[1], f"I logged in to vault with {v[1]} and it worked."),
        Secret("vault_legacy_token", v[2], f"export VAULT_TOKEN={v[2]}"),
        Secret("vault_legacy_token", v[3], f"client = hvac.Client(url='https://vault:8200', token='{v[3]}')"),
        Secret("vault_legacy_token", v[4], f'We\'ll use "{v[4]}" as the root token for the staging vault.'),
    ]


def _vault_in_prose(rng: random.Random) -> list[Secret]:
    long = "hv" + "s." + "CAES" + _r(rng, B64URL, rng.randint(88, 110))
    short = ["hv" + "s." + _r(rng, ALNUM, n) for n in (24, 26, 28)]
    batch = "hv" + "b." + "AAAAAQ" + _r(rng, B64URL, 130)
    return [
        Secret("vault_token_in_prose", long, f"I logged in to vault with {long} and it worked."),
        *(Secret("vault_token_in_prose", v, f"I logged in to vault with {v} and it worked.") for v in short),
        Secret("vault_token_in_prose", short[0], PROSE.format(short[0])),
        Secret("vault_token_in_prose", batch, f"We'll use the batch token {batch} for the staging API."),
    ]


def _aws_in_prose(rng: random.Random) -> list[Secret]:
    """AWS secret keys said in a sentence, without the aws_secret_access_key label."""
    key, v = aws_access_key(rng), [aws_secret(rng) for _ in range(5)]
    return [
        Secret("aws_secret_in_prose", v[0], f"We'll use the AWS secret key {v[0]} for the staging API."),
        Secret("aws_secret_in_prose", v[1], f"We'll use {key} with {v[1]} for the staging API."),
        Secret("aws_secret_in_prose", v[2], f"The AWS secret is '{v[2]}', the key id {key}."),
        Secret("aws_secret_in_prose", v[3], f'aws configure set aws_secret_access_key "{v[3]}"'),
        Secret("aws_secret_in_prose", v[4], f"For AWS we'll use the secret access key {v[4]} on staging."),
    ]


def _key_bodies(rng: random.Random) -> list[Secret]:
    """Private keys pasted without their BEGIN/END lines: an OpenSSH body, PKCS#1 and PKCS#8 RSA, EC."""
    def body(head: str, lines: int, width: int) -> list[str]:
        flat = head + _r(rng, B64, width * lines - len(head))
        return [flat[i:i + width] for i in range(0, len(flat), width)]

    openssh = "b3BlbnNz" + "aC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAB"
    pkcs1, pkcs8 = "MIIEow" + "IBAAKCAQEA", "MIIEvQ" + "IBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"
    ec = "MHcC" + "AQEEI"
    out = []
    for n, (head, lines, width) in enumerate([(openssh, 7, 70), (openssh, 20, 70), (openssh, 1, 200),
                                              (pkcs1, 12, 64), (pkcs8, 12, 64), (ec, 3, 64)]):
        b = body(head, lines, width)
        if n == 0:
            text = "Here is the deploy key body:\n" + "\n".join(b) + "\nWe'll use it for the staging API."
        elif n == 1:
            text = json.dumps({"deploy_key_body": "\n".join(b)})
        elif n == 2:
            text = PROSE.format(b[0])
        else:
            text = "key material:\n" + "\n".join(b) + "\n"
        out.append(Secret("private_key_body", b[min(1, len(b) - 1)], text))
    return out


def _azure_sas(rng: random.Random) -> list[Secret]:
    out = []
    for n in range(4):
        raw = _r(rng, B64, 43) + "="
        sig = raw.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D") if n % 2 == 0 else raw
        query = f"sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2026-03-01T00:00:00Z&st=2026-01-01T00:00:00Z&spr=https&sig={sig}"
        url = f"https://acct{n}.blob.core.windows.net/backups?{query}"
        texts = [PROSE.format(url), f'az storage blob upload --sas-token "{query}" -f x.tar',
                 f"BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature={query}",
                 f'sas_url = "{url}"']
        out.append(Secret("azure_sas", sig, texts[n]))
    return out


def _twilio_positional(rng: random.Random) -> list[Secret]:
    """A Twilio client built with the account SID and the auth token, without the word twilio."""
    out = []
    for n in range(4):
        sid, token = "A" + "C" + _hex(rng, 32), _hex(rng, 32)
        texts = [PROSE.format(f"Client('{sid}', '{token}')"), f'client = Client("{sid}", "{token}")',
                 f"We'll use account {sid} with auth token {token} for the staging API.",
                 f"Client(\n    '{sid}',\n    '{token}',\n)"]
        out.append(Secret("twilio_positional", token, texts[n]))
    return out


MAKERS: dict[str, Maker] = {
    "aws_access_key": _tokens("aws_access_key", aws_access_key, "AWS key id"),
    "aws_secret_access_key": _aws_secret,
    "github_token": _tokens("github_token", github_token, "GitHub token"),
    "gitlab_token": _tokens("gitlab_token", gitlab_token, "GitLab token"),
    "anthropic_api_key": _tokens("anthropic_api_key", anthropic_key, "Anthropic key"),
    "openai_api_key": _tokens("openai_api_key", openai_key, "OpenAI key"),
    "slack_token": _tokens("slack_token", slack_token, "Slack bot token"),
    "slack_webhook": _tokens("slack_webhook", slack_webhook, "Slack webhook"),
    "google_api_key": _tokens("google_api_key", google_api_key, "Maps key"),
    "stripe_key": _tokens("stripe_key", stripe_key, "Stripe key"),
    "sendgrid_key": _tokens("sendgrid_key", sendgrid_key, "SendGrid key"),
    "pypi_token": _tokens("pypi_token", pypi_token, "PyPI token"),
    "twilio_key": _tokens("twilio_key", twilio_key, "Twilio key"),
    "telegram_token": _tokens("telegram_token", telegram_token, "bot token"),
    "jwt": _tokens("jwt", jwt, "session token"),
    "npm_token": _npm,
    "azure_storage_key": _azure,
    "private_key": _private_keys,
    "password_in_url": _urls,
    "env_assignment": _env,
    "assignment": _assignments,
    "bearer_token": _bearer,
    "private": _private_tags,
    **{kind: _platform(kind, make) for kind, make in PLATFORM_TOKENS.items()},
    "webhook": _webhooks,
    "command_line": _command_lines,
    "password_in_prose": _spoken_passwords,
    "google_oauth_secret": _google_oauth_secrets,
    "base64_env": _base64_envs,
    "vault_legacy_token": _vault_legacy,
    "vault_token_in_prose": _vault_in_prose,
    "aws_secret_in_prose": _aws_in_prose,
    "private_key_body": _key_bodies,
    "azure_sas": _azure_sas,
    "twilio_positional": _twilio_positional,
}
# The kinds said in sentences an extractor keeps, that got through before issue 32 (its end-to-end test).
SPOKEN = ("password_in_prose", "google_oauth_secret", "base64_env", "vault_legacy_token", "vault_token_in_prose",
          "aws_secret_in_prose", "private_key_body", "azure_sas", "twilio_positional")


def corpus(seed: int = 0, per_type: int = 3) -> list[Secret]:
    """`per_type` rounds of every maker: each round a fresh value in each of its contexts."""
    rng = random.Random(seed)
    return [secret for _ in range(per_type) for make in MAKERS.values() for secret in make(rng)]


BENIGN = [
    "The token budget is 16000 per chunk; max_tokens = 4096 for the answer.",
    "token_count = len(tokens)\nif token_count > MAX_TOKENS:\n    raise TooLong(token_count)",
    'api_key = os.environ["ANTHROPIC_API_KEY"]\nclient = anthropic.Anthropic(api_key=api_key)',
    "password = getpass.getpass()\nself.password_field = form.get('password')",
    "headers = {'Authorization': f'Bearer {token}'}\nTOKEN=$(gh auth token)\nexport API_KEY=${API_KEY:-}",
    "commit 3f9a8c2d1e7b6a5f4c3b2a1908f7e6d5c4b3a291 (HEAD -> main)",
    "session 5eed0000-1357-4131-8000-000000000001, turn 7c9e6679-7425-40de-944b-e07cc4dd7a1f",
    "See https://docs.example.com/guide?page=2#auth and git@github.com:org/repo.git",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "def check_password(password: str) -> bool:\n    return bcrypt.checkpw(password.encode(), stored)",
    "Keys are prefixed: sk-ant- for Anthropic, ghp_ for GitHub, AKIA for AWS access key ids.",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "The primary key is (session_id, seq); sort_key: created_at",
    '{"key": "value", "token_type": "bearer", "expires_in": 3600}',
    "/home/dev/projects/checkpoint/daemon/checkpoint/extract/anthropic.py:123: def fit(self)",
    "KEYBOARD_LAYOUT=us\nTOKENIZERS_PARALLELISM=false\nMAX_TOKENS=4096\nPASSWORD_MIN_LENGTH=12",
    "We'll use marker-1a2b3c4d5e6f for the parser layer.",
    "run(max_tokens=4096, sort_key=created_at) and GET /items?page=2&key=value&token_type=bearer",
    "checkpoint now --api-key=$ANTHROPIC_API_KEY --max-tokens=200000 token_budget=16000",
    "Decision: passwords are hashed with argon2id; never log the Authorization header.",
]


def rates(secrets: list[Secret], redact: Callable[[str], str]) -> dict[str, tuple[int, int]]:
    """Per type: (detected, total); detected means the value is gone from the redacted text."""
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for secret in secrets:
        total[secret.kind] += 1
        if secret.value not in redact(secret.text):
            found[secret.kind] += 1
    return {kind: (found[kind], total[kind]) for kind in total}


ROOT = Path(__file__).resolve().parents[1]
GITLEAKS_CASES = ROOT / "tests" / "data" / "gitleaks_cases.json"
SAMPLE_ROOTS = (ROOT / "tests" / "data" / "samples", ROOT.parent / "shared" / "samples", Path("/work/shared/samples"))


@dataclass(frozen=True)
class Case:
    rule: str  # the gitleaks rule the case tests
    text: str
    secret: bool  # True: gitleaks must flag it; False: it must not


def gitleaks_cases(path: Path = GITLEAKS_CASES) -> list[Case]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Case(c["rule"], c["text"], c["label"] == "secret") for c in data["cases"]]


def sample_lines() -> Iterator[tuple[str, str]]:
    """(file, line) of every real sample transcript, once each (the two copies of the samples overlap)."""
    seen: set[str] = set()
    for root in SAMPLE_ROOTS:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.jsonl")):
            if "secrets" in path.relative_to(root).parts:
                continue  # the secret scanners' own test data: secrets on purpose
            key = str(path.relative_to(root))
            if key in seen:
                continue
            seen.add(key)
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.strip():
                    yield key, line


def figures(seed: int, per_type: int) -> dict[str, Any]:
    """Everything the script prints, as data (so a baseline revision can compute it in its own process)."""
    from checkpoint import redact

    r = redact.redactor()
    own = rates(corpus(seed, per_type), lambda t: r.redact(t).text)
    cases = gitleaks_cases()
    found = r.redact_many([c.text for c in cases])
    by_rule: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        if case.secret:
            entry = by_rule.setdefault(case.rule, [0, 0])
            entry[0] += i in found
            entry[1] += 1
    gitleaks_fp = [cases[i].text for i in found if not cases[i].secret]
    lines = list(sample_lines())
    hits = r.redact_many([line for _, line in lines])
    kinds: Counter[str] = Counter()
    for red in hits.values():
        kinds.update(red.found)
    return {
        "own": own,
        "gitleaks": by_rule,
        "gitleaks_benign": [sum(not c.secret for c in cases), gitleaks_fp],
        "benign": [len(BENIGN), [t for t in BENIGN if r.redact(t).found]],
        "samples": [len(lines), len(hits), dict(kinds.most_common())],
    }


def baseline_figures(rev: str, seed: int, per_type: int) -> dict[str, Any]:
    """The figures with the detectors of a git revision: its daemon/ unpacked, this script run against it."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "daemon"], capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory(prefix="checkpoint-baseline-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(tmp) / "daemon"), str(ROOT)]),
               "XDG_CACHE_HOME": str(Path(tmp) / "cache")}  # its own anchor cache
        out = subprocess.run([sys.executable, "-m", "scripts.secrets_corpus", "--seed", str(seed), "--per-type",
                              str(per_type), "--json"], capture_output=True, text=True, check=True, env=env, cwd=tmp)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _rate(found: int, total: int) -> str:
    return f"{found:>5} / {total:<5} {found / total if total else 0:6.1%}"


def report(title: str, fig: dict[str, Any]) -> None:
    own: dict[str, tuple[int, int]] = {k: (v[0], v[1]) for k, v in fig["own"].items()}
    gl: dict[str, tuple[int, int]] = {k: (v[0], v[1]) for k, v in fig["gitleaks"].items()}
    width = max(map(len, [*own, *gl]))
    print(f"== {title}")
    print("own corpus (generated for these detectors), detected / total:")
    for kind, (found, total) in own.items():
        print(f"  {kind:<{width}}  {_rate(found, total)}")
    print(f"  {'all':<{width}}  {_rate(sum(f for f, _ in own.values()), sum(t for _, t in own.values()))}")
    print("gitleaks corpus (its rules' literal test cases, tests/data/gitleaks_cases.json), detected / total:")
    for rule, (found, total) in gl.items():
        print(f"  {rule:<{width}}  {_rate(found, total)}")
    print(f"  {'all':<{width}}  {_rate(sum(f for f, _ in gl.values()), sum(t for _, t in gl.values()))}")
    total_benign, gl_fp = fig["gitleaks_benign"]
    print(f"gitleaks' benign cases changed: {len(gl_fp)} of {total_benign}")
    for text in gl_fp:
        print(f"  {text[:110]!r}")
    n_benign, touched = fig["benign"]
    print(f"own benign texts changed: {len(touched)} of {n_benign}")
    for text in touched:
        print(f"  {text[:110]!r}")
    n_lines, n_hit, kinds = fig["samples"]
    print(f"real sample transcript lines changed (benign false positives): {n_hit} of {n_lines}; by kind: {kinds}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-type", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", help="also print the figures of this git revision's detectors")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON (what --baseline reads)")
    args = parser.parse_args()
    fig = figures(args.seed, args.per_type)
    if args.json:
        print(json.dumps(fig))
        return
    if args.baseline:
        report(f"before: the detectors of {args.baseline}", baseline_figures(args.baseline, args.seed, args.per_type))
        print()
    report("after: the detectors of this checkout", fig)


if __name__ == "__main__":
    main()
