"""Secrets said in sentences (issue 32): the kinds that got through when said in prose the offline
extractor keeps, for tests/support/secrets_corpus.py."""

from __future__ import annotations

import base64
import json
import random
import string

from tests.support.secrets_shapes import (
    ALNUM,
    B64,
    B64URL,
    Maker,
    Secret,
    aws_access_key,
    aws_secret,
    hex_of,
    in_contexts,
    password,
    rand,
)

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
    return "GOC" + "SPX-" + rand(rng, B64URL, 28)


def _google_oauth_secrets(rng: random.Random) -> list[Secret]:
    v = [google_oauth_secret(rng) for _ in range(3)]
    client_id = rand(rng, string.digits, 12) + "-" + rand(rng, string.ascii_lowercase + string.digits, 32)
    return [
        *in_contexts("google_oauth_secret", v[0], "OAuth client secret"),
        Secret("google_oauth_secret", v[1], PROSE.format(v[1])),
        Secret("google_oauth_secret", v[2],
               f'{{"installed": {{"client_id": "{client_id}.apps.googleusercontent.com", '
               f'"client_secret": "{v[2]}"}}}}'),
    ]


def _base64_envs(rng: random.Random) -> list[Secret]:
    """A .env (or a credentials JSON) base64-encoded: a Kubernetes secret, a CI variable, a pasted blob."""
    out = []
    for n in range(6):
        pw, live = password(rng), "sk" + "_live_" + rand(rng, ALNUM, 24)
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
    long = "hv" + "s." + "CAES" + rand(rng, B64URL, rng.randint(88, 110))
    short = ["hv" + "s." + rand(rng, ALNUM, n) for n in (24, 26, 28)]
    batch = "hv" + "b." + "AAAAAQ" + rand(rng, B64URL, 130)
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
        flat = head + rand(rng, B64, width * lines - len(head))
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
        raw = rand(rng, B64, 43) + "="
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
        sid, token = "A" + "C" + hex_of(rng, 32), hex_of(rng, 32)
        texts = [PROSE.format(f"Client('{sid}', '{token}')"), f'client = Client("{sid}", "{token}")',
                 f"We'll use account {sid} with auth token {token} for the staging API.",
                 f"Client(\n    '{sid}',\n    '{token}',\n)"]
        out.append(Secret("twilio_positional", token, texts[n]))
    return out


# -- issue 37: the seven kinds that still got through said in sentences -----------------------------------


def _aws_near_secret(rng: random.Random) -> list[Secret]:
    """An AWS secret key next to the word secret, no "aws" and no key id near."""
    v = [aws_secret(rng) for _ in range(3)]
    return [Secret("aws_secret_near_secret", v[0], f"We'll use the secret {v[0]} for the staging bucket."),
            Secret("aws_secret_near_secret", v[1], f"The backup job's secret key is {v[1]}, we'll use it on staging."),
            Secret("aws_secret_near_secret", v[2], f"We'll use {v[2]} as the secret for the staging API.")]


def _password_other_languages(rng: random.Random) -> list[Secret]:
    pw = [spoken_password(rng) for _ in range(4)]
    return [Secret("password_other_language", pw[0], f"We'll use the staging login; das Passwort ist {pw[0]}."),
            Secret("password_other_language", pw[1], f"Das Passwort für die Datenbank lautet {pw[1]}."),
            Secret("password_other_language", pw[2], f"We'll use the admin account, le mot de passe est {pw[2]}."),
            Secret("password_other_language", pw[3], f"La contraseña es {pw[3]} para el servidor de staging.")]


def _datadog(rng: random.Random) -> list[Secret]:
    v = [hex_of(rng, 32), hex_of(rng, 32), hex_of(rng, 32)]
    return [Secret("datadog_key", v[0], f"We'll use the Datadog API key {v[0]} for the staging API."),
            Secret("datadog_key", v[1], f"Our datadog key is {v[1]}, we'll use it for staging."),
            Secret("datadog_key", v[2], f"export DD_API_KEY={v[2]}  # we'll use it on staging")]


def _heroku(rng: random.Random) -> list[Secret]:
    def uuid() -> str:
        h = hex_of(rng, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    v = [uuid(), uuid()]
    return [Secret("heroku_key", v[0], f"We'll use the Heroku API key {v[0]} for the staging API."),
            Secret("heroku_key", v[1], f"We'll deploy to heroku with the key {v[1]} on staging.")]


def _weak_passwords(rng: random.Random) -> list[Secret]:
    words = ["hunter", "dragon", "monkey", "letmein", "shadow", "sunshine"]
    v = [rng.choice(words) + str(rng.randint(1, 99)) for _ in range(3)]
    return [Secret("weak_password", v[0], f"We'll use the staging box; the password is {v[0]} for now."),
            Secret("weak_password", v[1], f"The root password was {v[1]}, we'll use it for the staging API."),
            Secret("weak_password", v[2], f"We'll use the wifi; its password is {v[2]}!")]


def _yaml_passphrases(rng: random.Random) -> list[Secret]:
    words = ["correct", "horse", "battery", "staple", "orbit", "lantern", "violet", "quarry", "saddle", "pepper"]
    v = [" ".join(rng.sample(words, 4)) for _ in range(3)]
    return [Secret("yaml_passphrase", v[0], f'We\'ll use the passphrase "{v[0]}" for the staging backups.'),
            Secret("yaml_passphrase", v[1], f"ssh:\n  key_passphrase: {v[1]}\n"),
            Secret("yaml_passphrase", v[2], f"We'll use the vault config:\n- password: {v[2]}\n")]


def _hex_token_without_provider(rng: random.Random) -> list[Secret]:
    v = [hex_of(rng, 32) for _ in range(3)]
    return [Secret("hex_token_no_provider", v[0], f"We'll use auth token {v[0]} for the staging SMS API."),
            Secret("hex_token_no_provider", v[1], f"The auth_token is {v[1]}; we'll use it for staging."),
            Secret("hex_token_no_provider", v[2], f"We'll use the SMS authtoken {v[2]} for the staging API.")]


# The kinds said in sentences an extractor keeps, that got through before issue 32 (its end-to-end test)
# and issue 37.
SPOKEN_MAKERS: dict[str, Maker] = {
    "password_in_prose": _spoken_passwords,
    "google_oauth_secret": _google_oauth_secrets,
    "base64_env": _base64_envs,
    "vault_legacy_token": _vault_legacy,
    "vault_token_in_prose": _vault_in_prose,
    "aws_secret_in_prose": _aws_in_prose,
    "private_key_body": _key_bodies,
    "azure_sas": _azure_sas,
    "twilio_positional": _twilio_positional,
    "aws_secret_near_secret": _aws_near_secret,
    "password_other_language": _password_other_languages,
    "datadog_key": _datadog,
    "heroku_key": _heroku,
    "weak_password": _weak_passwords,
    "yaml_passphrase": _yaml_passphrases,
    "hex_token_no_provider": _hex_token_without_provider,
}
