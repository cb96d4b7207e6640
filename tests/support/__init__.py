"""What the tiers share: harnesses that drive the real processes (cli_run, lsp_support, crash_harness),
test doubles that speak real wire protocols (fake_anthropic), synthetic transcripts (synth), faulty
parts (faulty), the reference scan (oracle) and the real samples (samples)."""
