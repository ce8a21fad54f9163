"""Anthropic's and OpenAI's list prices, genai-prices 0.2.3: generated, do not edit.

Made by scripts/gen_price_table.py, so a cost is worked out without importing the package (see
`stayer.providers.listed`). tests/unit/core/test_price_table.py checks it.
"""

from stayer.providers.listed import Clause, ListedModel, ListedPrice, Rate

PRICE_TABLE: dict[str, tuple[ListedModel, ...]] = {
    "anthropic": (
        ListedModel(
            "claude-2",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-2"),
                    Clause("contains", "claude-v2"),
                ),
            ),
            (ListedPrice(Rate("8"), Rate("24"), None, None, None),),
        ),
        ListedModel(
            "claude-3-5-haiku-latest",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-3-5-haiku"),
                    Clause("starts_with", "claude-3.5-haiku"),
                ),
            ),
            (ListedPrice(Rate("0.8"), Rate("4"), Rate("0.08"), Rate("1"), None),),
        ),
        ListedModel(
            "claude-3-5-sonnet",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-3-5-sonnet"),
                    Clause("starts_with", "claude-3.5-sonnet"),
                ),
            ),
            (ListedPrice(Rate("3"), Rate("15"), Rate("0.3"), Rate("3.75"), None),),
        ),
        ListedModel(
            "claude-3-7-sonnet-latest",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-3-7-sonnet"),
                    Clause("starts_with", "claude-3.7-sonnet"),
                    Clause("starts_with", "claude-sonnet-3.7"),
                    Clause("starts_with", "claude-sonnet-3-7"),
                ),
            ),
            (ListedPrice(Rate("3"), Rate("15"), Rate("0.3"), Rate("3.75"), None),),
        ),
        ListedModel(
            "claude-3-haiku",
            Clause("starts_with", "claude-3-haiku"),
            (ListedPrice(Rate("0.25"), Rate("1.25"), Rate("0.03"), Rate("0.3"), None),),
        ),
        ListedModel(
            "claude-3-opus-latest",
            Clause("starts_with", "claude-3-opus"),
            (ListedPrice(Rate("15"), Rate("75"), Rate("1.5"), Rate("18.75"), None),),
        ),
        ListedModel(
            "claude-3-sonnet",
            Clause("starts_with", "claude-3-sonnet"),
            (ListedPrice(Rate("3"), Rate("15"), Rate("0.3"), Rate("3.75"), None),),
        ),
        ListedModel(
            "claude-fable-5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-fable-5"),
                    Clause("regex", "^claude-fable-5-\\d{8}$"),
                ),
            ),
            (ListedPrice(Rate("10"), Rate("50"), Rate("1"), Rate("12.5"), None),),
        ),
        ListedModel(
            "claude-fable-5-1",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-fable-5-1"),
                    Clause("regex", "^claude-fable-5-1-\\d{8}$"),
                ),
            ),
            (ListedPrice(Rate("10"), Rate("50"), Rate("0.25"), Rate("12.5"), None),),
        ),
        ListedModel(
            "claude-fable-5-2",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-fable-5-2"),
                    Clause("regex", "^claude-fable-5-2-\\d{8}$"),
                ),
            ),
            (ListedPrice(Rate("8"), Rate("40"), Rate("0.2"), Rate("10"), None),),
        ),
        ListedModel(
            "claude-haiku-4-5",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-haiku-4-5"),
                    Clause("starts_with", "claude-haiku-4.5"),
                    Clause("starts_with", "claude-4-5-haiku"),
                    Clause("starts_with", "claude-4.5-haiku"),
                ),
            ),
            (ListedPrice(Rate("1"), Rate("5"), Rate("0.1"), Rate("1.25"), None),),
        ),
        ListedModel(
            "claude-haiku-5-5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-haiku-5-5"),
                    Clause("regex", "^claude-haiku-5-5-\\d{8}$"),
                    Clause("starts_with", "claude-haiku-5-5@"),
                    Clause("starts_with", "claude-haiku-5.5"),
                    Clause("starts_with", "claude-5-5-haiku"),
                    Clause("starts_with", "claude-5.5-haiku"),
                ),
            ),
            (
                ListedPrice(
                    Rate("0.1", ((100000, "0.5"),)),
                    Rate("0.5", ((100000, "2.5"),)),
                    Rate("0.01", ((100000, "0.05"),)),
                    Rate("0.125", ((100000, "0.625"),)),
                    None,
                ),
            ),
        ),
        ListedModel(
            "claude-mythos-5-2",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-mythos-5-2"),
                    Clause("regex", "^claude-mythos-5-2-\\d{8}$"),
                ),
            ),
            (ListedPrice(Rate("8"), Rate("40"), Rate("0.2"), Rate("10"), None),),
        ),
        ListedModel(
            "claude-opus-4-0",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-opus-4-0"),
                    Clause("starts_with", "claude-4-opus"),
                    Clause("equals", "claude-opus-4"),
                    Clause("equals", "claude-opus-4-20250514"),
                ),
            ),
            (ListedPrice(Rate("15"), Rate("75"), Rate("1.5"), Rate("18.75"), None),),
        ),
        ListedModel(
            "claude-opus-4-1",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-opus-4-1"),
                    Clause("starts_with", "claude-opus-4.1"),
                ),
            ),
            (ListedPrice(Rate("15"), Rate("75"), Rate("1.5"), Rate("18.75"), None),),
        ),
        ListedModel(
            "claude-opus-4-5",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-opus-4-5"),
                    Clause("starts_with", "claude-opus-4.5"),
                    Clause("starts_with", "claude-4-5-opus"),
                    Clause("starts_with", "claude-4.5-opus"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("25"), Rate("0.5"), Rate("6.25"), None),),
        ),
        ListedModel(
            "claude-opus-4-6",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-opus-4-6"),
                    Clause("starts_with", "claude-opus-4.6"),
                    Clause("starts_with", "claude-4-6-opus"),
                    Clause("starts_with", "claude-4.6-opus"),
                ),
            ),
            (
                ListedPrice(
                    Rate("5", ((200000, "10"),)),
                    Rate("25", ((200000, "37.5"),)),
                    Rate("0.5", ((200000, "1"),)),
                    Rate("6.25", ((200000, "12.5"),)),
                    None,
                ),
                ListedPrice(Rate("5"), Rate("25"), Rate("0.5"), Rate("6.25"), "2026-03-13"),
            ),
        ),
        ListedModel(
            "claude-opus-4-7",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-opus-4-7"),
                    Clause("starts_with", "claude-opus-4.7"),
                    Clause("starts_with", "claude-4-7-opus"),
                    Clause("starts_with", "claude-4.7-opus"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("25"), Rate("0.5"), Rate("6.25"), None),),
        ),
        ListedModel(
            "claude-opus-4-8",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-opus-4-8"),
                    Clause("starts_with", "claude-opus-4.8"),
                    Clause("starts_with", "claude-4-8-opus"),
                    Clause("starts_with", "claude-4.8-opus"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("25"), Rate("0.5"), Rate("6.25"), None),),
        ),
        ListedModel(
            "claude-opus-5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-opus-5"),
                    Clause("equals", "claude-opus-5-latest"),
                    Clause("regex", "^claude-opus-5[-@]\\d{8}$"),
                    Clause("regex", "^claude-opus-5-\\d{4}-\\d{2}-\\d{2}$"),
                    Clause("starts_with", "claude-opus-5.0"),
                    Clause("starts_with", "claude-5-opus"),
                    Clause("starts_with", "claude-5.0-opus"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("25"), Rate("0.5"), Rate("6.25"), None),),
        ),
        ListedModel(
            "claude-opus-5-5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-opus-5-5"),
                    Clause("regex", "^claude-opus-5-5-\\d{8}$"),
                    Clause("starts_with", "claude-opus-5.5"),
                    Clause("starts_with", "claude-5-5-opus"),
                    Clause("starts_with", "claude-5.5-opus"),
                ),
            ),
            (ListedPrice(Rate("4"), Rate("20"), Rate("0.2"), Rate("5"), None),),
        ),
        ListedModel(
            "claude-sonnet-4-0",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-sonnet-4-2025"),
                    Clause("starts_with", "claude-sonnet-4-0"),
                    Clause("starts_with", "claude-sonnet-4@"),
                    Clause("equals", "claude-sonnet-4"),
                    Clause("starts_with", "claude-4-sonnet"),
                ),
            ),
            (ListedPrice(Rate("3"), Rate("15"), Rate("0.3"), Rate("3.75"), None),),
        ),
        ListedModel(
            "claude-sonnet-4-5",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-sonnet-4-5"),
                    Clause("starts_with", "claude-sonnet-4.5"),
                ),
            ),
            (
                ListedPrice(
                    Rate("3", ((200000, "6"),)),
                    Rate("15", ((200000, "22.5"),)),
                    Rate("0.3", ((200000, "0.6"),)),
                    Rate("3.75", ((200000, "7.5"),)),
                    None,
                ),
            ),
        ),
        ListedModel(
            "claude-sonnet-4-6",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "claude-sonnet-4-6"),
                    Clause("starts_with", "claude-sonnet-4.6"),
                ),
            ),
            (
                ListedPrice(
                    Rate("3", ((200000, "6"),)),
                    Rate("15", ((200000, "22.5"),)),
                    Rate("0.3", ((200000, "0.6"),)),
                    Rate("3.75", ((200000, "7.5"),)),
                    None,
                ),
                ListedPrice(Rate("3"), Rate("15"), Rate("0.3"), Rate("3.75"), "2026-03-13"),
            ),
        ),
        ListedModel(
            "claude-sonnet-5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-sonnet-5"),
                    Clause("regex", "^claude-sonnet-5-\\d{8}$"),
                    Clause("starts_with", "claude-sonnet-5@"),
                    Clause("starts_with", "claude-sonnet-5.0"),
                    Clause("starts_with", "claude-5-sonnet"),
                    Clause("starts_with", "claude-5.0-sonnet"),
                ),
            ),
            (ListedPrice(Rate("2"), Rate("10"), Rate("0.2"), Rate("2.5"), None),),
        ),
        ListedModel(
            "claude-sonnet-5-5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "claude-sonnet-5-5"),
                    Clause("regex", "^claude-sonnet-5-5-\\d{8}$"),
                    Clause("starts_with", "claude-sonnet-5-5@"),
                    Clause("starts_with", "claude-sonnet-5.5"),
                    Clause("starts_with", "claude-5-5-sonnet"),
                    Clause("starts_with", "claude-5.5-sonnet"),
                ),
            ),
            (ListedPrice(Rate("2"), Rate("10"), Rate("0.1"), Rate("2.5"), None),),
        ),
        ListedModel(
            "claude-v1",
            Clause("equals", "claude-v1"),
            (ListedPrice(Rate("8"), Rate("24"), None, None, None),),
        ),
    ),
    "openai": (
        ListedModel(
            "ada",
            Clause(
                "or",
                parts=(
                    Clause("equals", "ada"),
                    Clause("equals", "text-ada-001"),
                ),
            ),
            (ListedPrice(Rate("0.4"), Rate("0.4"), None, None, None),),
        ),
        ListedModel(
            "babbage",
            Clause("equals", "babbage"),
            (ListedPrice(Rate("0.5"), Rate("0.5"), None, None, None),),
        ),
        ListedModel(
            "babbage-002",
            Clause("equals", "babbage-002"),
            (ListedPrice(Rate("0.4"), Rate("0.4"), None, None, None),),
        ),
        ListedModel(
            "chatgpt-4o-latest",
            Clause("equals", "chatgpt-4o-latest"),
            (ListedPrice(Rate("5"), Rate("15"), None, None, None),),
        ),
        ListedModel(
            "chatgpt-image-latest",
            Clause("equals", "chatgpt-image-latest"),
            (ListedPrice(Rate("5"), Rate("10"), Rate("1.25"), None, None),),
        ),
        ListedModel(
            "codex-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "codex-mini"),
                    Clause("equals", "codex-mini-latest"),
                ),
            ),
            (ListedPrice(Rate("1.5"), Rate("6"), Rate("0.375"), None, None),),
        ),
        ListedModel(
            "computer-use",
            Clause("starts_with", "computer-use"),
            (ListedPrice(Rate("3"), Rate("12"), None, None, None),),
        ),
        ListedModel(
            "curie",
            Clause(
                "or",
                parts=(
                    Clause("equals", "curie"),
                    Clause("equals", "text-curie-001"),
                ),
            ),
            (ListedPrice(Rate("2"), Rate("2"), None, None, None),),
        ),
        ListedModel(
            "davinci",
            Clause(
                "or",
                parts=(
                    Clause("equals", "davinci"),
                    Clause("equals", "text-davinci-001"),
                ),
            ),
            (ListedPrice(Rate("20"), Rate("20"), None, None, None),),
        ),
        ListedModel(
            "davinci-002",
            Clause("equals", "davinci-002"),
            (ListedPrice(Rate("2"), Rate("2"), None, None, None),),
        ),
        ListedModel(
            "ft:gpt-3.5-turbo-",
            Clause("starts_with", "ft:gpt-3.5-turbo"),
            (ListedPrice(Rate("3"), Rate("6"), None, None, None),),
        ),
        ListedModel(
            "ft:gpt-4o",
            Clause("starts_with", "ft:gpt-4o-2024-"),
            (ListedPrice(Rate("3.75"), Rate("15"), None, None, None),),
        ),
        ListedModel(
            "ft:gpt-4o-mini",
            Clause("starts_with", "ft:gpt-4o-mini-2024-"),
            (ListedPrice(Rate("0.3"), Rate("1.2"), None, None, None),),
        ),
        ListedModel(
            "gpt-3.5-0301",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-3.5-turbo-0301"),
                    Clause("equals", "gpt-3.5-0301"),
                ),
            ),
            (ListedPrice(Rate("1.5"), Rate("2"), None, None, None),),
        ),
        ListedModel(
            "gpt-3.5-turbo",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-3.5-turbo"),
                    Clause("equals", "gpt-35-turbo"),
                    Clause("equals", "gpt-3.5-turbo-0125"),
                ),
            ),
            (ListedPrice(Rate("0.5"), Rate("1.5"), None, None, None),),
        ),
        ListedModel(
            "gpt-3.5-turbo-0613",
            Clause("equals", "gpt-3.5-turbo-0613"),
            (ListedPrice(Rate("1.5"), Rate("2"), None, None, None),),
        ),
        ListedModel(
            "gpt-3.5-turbo-1106",
            Clause("equals", "gpt-3.5-turbo-1106"),
            (ListedPrice(Rate("1"), Rate("2"), None, None, None),),
        ),
        ListedModel(
            "gpt-3.5-turbo-16k",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-3.5-turbo-16k"),
                    Clause("equals", "gpt-3.5-turbo-16k-0613"),
                    Clause("equals", "gpt-35-turbo-16k-0613"),
                    Clause("equals", "gpt-35-turbo-16k"),
                ),
            ),
            (ListedPrice(Rate("3"), Rate("4"), None, None, None),),
        ),
        ListedModel(
            "gpt-3.5-turbo-instruct",
            Clause(
                "or",
                parts=(
                    Clause("starts_with", "gpt-3.5-turbo-instruct"),
                    Clause("equals", "gpt-3.5-turbo-instruct-0914"),
                ),
            ),
            (ListedPrice(Rate("1.5"), Rate("2"), None, None, None),),
        ),
        ListedModel(
            "gpt-4",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4"),
                    Clause("equals", "gpt-4-0314"),
                    Clause("equals", "gpt-4-0613"),
                    Clause("starts_with", "ft:gpt-4-0"),
                ),
            ),
            (ListedPrice(Rate("30"), Rate("60"), None, None, None),),
        ),
        ListedModel(
            "gpt-4-32k",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4-32k"),
                    Clause("equals", "gpt-4-32k-0314"),
                    Clause("equals", "gpt-4-32k-0613"),
                ),
            ),
            (ListedPrice(Rate("60"), Rate("120"), None, None, None),),
        ),
        ListedModel(
            "gpt-4-turbo",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4-turbo"),
                    Clause("equals", "gpt-4-turbo-2024-04-09"),
                    Clause("equals", "gpt-4-turbo-0125-preview"),
                    Clause("equals", "gpt-4-0125-preview"),
                    Clause("equals", "gpt-4-1106-preview"),
                    Clause("equals", "gpt-4-turbo-preview"),
                ),
            ),
            (ListedPrice(Rate("10"), Rate("30"), None, None, None),),
        ),
        ListedModel(
            "gpt-4-vision-preview",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4-vision-preview"),
                    Clause("equals", "gpt-4-1106-vision-preview"),
                ),
            ),
            (ListedPrice(Rate("10"), Rate("30"), None, None, None),),
        ),
        ListedModel(
            "gpt-4.1",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4.1"),
                    Clause("equals", "gpt-4.1-2025-04-14"),
                ),
            ),
            (ListedPrice(Rate("2"), Rate("8"), Rate("0.5"), None, None),),
        ),
        ListedModel(
            "gpt-4.1-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4.1-mini"),
                    Clause("equals", "gpt-4.1-mini-2025-04-14"),
                ),
            ),
            (ListedPrice(Rate("0.4"), Rate("1.6"), Rate("0.1"), None, None),),
        ),
        ListedModel(
            "gpt-4.1-nano",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4.1-nano"),
                    Clause("equals", "gpt-4.1-nano-2025-04-14"),
                ),
            ),
            (ListedPrice(Rate("0.1"), Rate("0.4"), Rate("0.025"), None, None),),
        ),
        ListedModel(
            "gpt-4.5-preview",
            Clause("starts_with", "gpt-4.5-preview"),
            (ListedPrice(Rate("75"), Rate("150"), Rate("37.5"), None, None),),
        ),
        ListedModel(
            "gpt-4o",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4o"),
                    Clause("equals", "gpt-4o-2024-08-06"),
                    Clause("equals", "gpt-4o-2024-11-20"),
                ),
            ),
            (ListedPrice(Rate("2.5"), Rate("10"), Rate("1.25"), None, None),),
        ),
        ListedModel(
            "gpt-4o-2024-05-13",
            Clause("equals", "gpt-4o-2024-05-13"),
            (ListedPrice(Rate("5"), Rate("15"), None, None, None),),
        ),
        ListedModel(
            "gpt-4o-audio-preview",
            Clause("starts_with", "gpt-4o-audio-preview"),
            (ListedPrice(Rate("2.5"), Rate("10"), None, None, None),),
        ),
        ListedModel(
            "gpt-4o-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4o-mini"),
                    Clause("equals", "gpt-4o-mini-2024-07-18"),
                    Clause("equals", "gpt-4o-mini-search-preview"),
                    Clause("equals", "gpt-4o-mini-search-preview-2025-03-11"),
                ),
            ),
            (ListedPrice(Rate("0.15"), Rate("0.6"), Rate("0.075"), None, None),),
        ),
        ListedModel(
            "gpt-4o-mini-2024-07-18.ft-",
            Clause("starts_with", "gpt-4o-mini-2024-07-18.ft-"),
            (ListedPrice(Rate("0.3"), Rate("1.2"), None, None, None),),
        ),
        ListedModel(
            "gpt-4o-mini-audio-preview",
            Clause("starts_with", "gpt-4o-mini-audio"),
            (ListedPrice(Rate("0.15"), Rate("0.6"), None, None, None),),
        ),
        ListedModel(
            "gpt-4o-mini-realtime-preview",
            Clause("starts_with", "gpt-4o-mini-realtime"),
            (ListedPrice(Rate("0.6"), Rate("2.4"), Rate("0.3"), None, None),),
        ),
        ListedModel(
            "gpt-4o-mini-transcribe",
            Clause("equals", "gpt-4o-mini-transcribe"),
            (ListedPrice(Rate("1.25"), Rate("5"), None, None, None),),
        ),
        ListedModel(
            "gpt-4o-mini-tts",
            Clause("equals", "gpt-4o-mini-tts"),
            (ListedPrice(Rate("0.6"), Rate("12"), None, None, None),),
        ),
        ListedModel(
            "gpt-4o-realtime-preview",
            Clause("starts_with", "gpt-4o-realtime"),
            (ListedPrice(Rate("5"), Rate("20"), Rate("2.5"), None, None),),
        ),
        ListedModel(
            "gpt-4o-search-preview",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4o-search-preview"),
                    Clause("equals", "gpt-4o-search-preview-2025-03-11"),
                ),
            ),
            (ListedPrice(Rate("2.5"), Rate("10"), None, None, None),),
        ),
        ListedModel(
            "gpt-4o-transcribe",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-4o-transcribe"),
                    Clause("equals", "gpt-4o-transcribe-diarize"),
                ),
            ),
            (ListedPrice(Rate("2.5"), Rate("10"), None, None, None),),
        ),
        ListedModel(
            "gpt-4o:extended",
            Clause("equals", "gpt-4o:extended"),
            (ListedPrice(Rate("6"), Rate("18"), None, None, None),),
        ),
        ListedModel(
            "gpt-5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5"),
                    Clause("equals", "gpt-5-2025-08-07"),
                    Clause("equals", "gpt-5-chat"),
                    Clause("equals", "gpt-5-chat-latest"),
                    Clause("equals", "gpt-5-codex"),
                ),
            ),
            (ListedPrice(Rate("1.25"), Rate("10"), Rate("0.125"), None, None),),
        ),
        ListedModel(
            "gpt-5-image",
            Clause("equals", "gpt-5-image"),
            (ListedPrice(Rate("10"), Rate("10"), Rate("1.25"), None, None),),
        ),
        ListedModel(
            "gpt-5-image-mini",
            Clause("equals", "gpt-5-image-mini"),
            (ListedPrice(Rate("2.5"), Rate("2"), Rate("0.25"), None, None),),
        ),
        ListedModel(
            "gpt-5-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5-mini"),
                    Clause("equals", "gpt-5-mini-2025-08-07"),
                ),
            ),
            (ListedPrice(Rate("0.25"), Rate("2"), Rate("0.025"), None, None),),
        ),
        ListedModel(
            "gpt-5-nano",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5-nano"),
                    Clause("starts_with", "gpt-5-nano-"),
                ),
            ),
            (ListedPrice(Rate("0.05"), Rate("0.4"), Rate("0.005"), None, None),),
        ),
        ListedModel(
            "gpt-5-pro",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5-pro"),
                    Clause("equals", "gpt-5-pro-2025-10-06"),
                ),
            ),
            (ListedPrice(Rate("15"), Rate("120"), None, None, None),),
        ),
        ListedModel(
            "gpt-5-search-api",
            Clause("equals", "gpt-5-search-api"),
            (ListedPrice(Rate("1.25"), Rate("10"), Rate("0.125"), None, None),),
        ),
        ListedModel(
            "gpt-5.1",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.1"),
                    Clause("equals", "gpt-5.1-2025-11-13"),
                    Clause("equals", "gpt-5.1-codex"),
                    Clause("equals", "gpt-5.1-codex-max"),
                    Clause("equals", "gpt-5.1-chat"),
                    Clause("equals", "gpt-5.1-chat-latest"),
                    Clause("equals", "gpt-5-1"),
                    Clause("equals", "gpt-5-1-2025-11-13"),
                    Clause("equals", "gpt-5-1-codex"),
                    Clause("equals", "gpt-5-1-codex-max"),
                    Clause("equals", "gpt-5-1-chat"),
                    Clause("equals", "gpt-5-1-chat-latest"),
                ),
            ),
            (ListedPrice(Rate("1.25"), Rate("10"), Rate("0.125"), None, None),),
        ),
        ListedModel(
            "gpt-5.1-codex-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.1-codex-mini"),
                    Clause("equals", "gpt-5.1-mini"),
                    Clause("equals", "gpt-5-1-codex-mini"),
                    Clause("equals", "gpt-5-1-mini"),
                ),
            ),
            (ListedPrice(Rate("0.25"), Rate("2"), Rate("0.025"), None, None),),
        ),
        ListedModel(
            "gpt-5.2",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.2"),
                    Clause("equals", "gpt-5.2-2025-12-11"),
                    Clause("equals", "gpt-5-2"),
                    Clause("equals", "gpt-5-2-2025-12-11"),
                    Clause("equals", "gpt-5.2-chat"),
                    Clause("equals", "gpt-5.2-chat-latest"),
                    Clause("equals", "gpt-5-2-chat"),
                    Clause("equals", "gpt-5-2-chat-latest"),
                    Clause("equals", "gpt-5.2-codex"),
                    Clause("equals", "gpt-5-2-codex"),
                ),
            ),
            (ListedPrice(Rate("1.75"), Rate("14"), Rate("0.175"), None, None),),
        ),
        ListedModel(
            "gpt-5.2-pro",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.2-pro"),
                    Clause("equals", "gpt-5.2-pro-2025-12-11"),
                    Clause("equals", "gpt-5-2-pro-2025-12-11"),
                ),
            ),
            (ListedPrice(Rate("21"), Rate("168"), None, None, None),),
        ),
        ListedModel(
            "gpt-5.3",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.3"),
                    Clause("equals", "gpt-5-3"),
                    Clause("equals", "gpt-5.3-chat"),
                    Clause("equals", "gpt-5.3-chat-latest"),
                    Clause("equals", "gpt-5-3-chat"),
                    Clause("equals", "gpt-5-3-chat-latest"),
                ),
            ),
            (ListedPrice(Rate("1.75"), Rate("14"), Rate("0.175"), None, None),),
        ),
        ListedModel(
            "gpt-5.3-codex",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.3-codex"),
                    Clause("equals", "gpt-5-3-codex"),
                ),
            ),
            (ListedPrice(Rate("1.75"), Rate("14"), Rate("0.175"), None, None),),
        ),
        ListedModel(
            "gpt-5.4",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.4"),
                    Clause("equals", "gpt-5.4-2026-03-05"),
                    Clause("equals", "gpt-5-4"),
                    Clause("equals", "gpt-5-4-2026-03-05"),
                ),
            ),
            (
                ListedPrice(
                    Rate("2.5", ((272000, "5"),)),
                    Rate("15", ((272000, "22.5"),)),
                    Rate("0.25", ((272000, "0.5"),)),
                    None,
                    None,
                ),
            ),
        ),
        ListedModel(
            "gpt-5.4-image-2",
            Clause("equals", "gpt-5.4-image-2"),
            (ListedPrice(Rate("8"), Rate("15"), Rate("2"), None, None),),
        ),
        ListedModel(
            "gpt-5.4-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.4-mini"),
                    Clause("equals", "gpt-5.4-mini-2026-03-17"),
                    Clause("equals", "gpt-5-4-mini"),
                    Clause("equals", "gpt-5-4-mini-2026-03-17"),
                ),
            ),
            (ListedPrice(Rate("0.75"), Rate("4.5"), Rate("0.075"), None, None),),
        ),
        ListedModel(
            "gpt-5.4-nano",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.4-nano"),
                    Clause("equals", "gpt-5.4-nano-2026-03-17"),
                    Clause("equals", "gpt-5-4-nano"),
                    Clause("equals", "gpt-5-4-nano-2026-03-17"),
                ),
            ),
            (ListedPrice(Rate("0.2"), Rate("1.25"), Rate("0.02"), None, None),),
        ),
        ListedModel(
            "gpt-5.4-pro",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.4-pro"),
                    Clause("equals", "gpt-5.4-pro-2026-03-05"),
                    Clause("equals", "gpt-5-4-pro"),
                    Clause("equals", "gpt-5-4-pro-2026-03-05"),
                ),
            ),
            (
                ListedPrice(
                    Rate("30", ((272000, "60"),)), Rate("180", ((272000, "270"),)), None, None, None
                ),
            ),
        ),
        ListedModel(
            "gpt-5.5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.5"),
                    Clause("equals", "gpt-5.5-2026-04-23"),
                    Clause("equals", "gpt-5.5-2026-04-24"),
                    Clause("equals", "gpt-5-5"),
                    Clause("equals", "gpt-5-5-2026-04-23"),
                    Clause("equals", "gpt-5-5-2026-04-24"),
                    Clause("equals", "gpt-5.5-chat"),
                    Clause("equals", "gpt-5.5-chat-latest"),
                    Clause("equals", "gpt-5-5-chat"),
                    Clause("equals", "gpt-5-5-chat-latest"),
                    Clause("equals", "gpt-5.5-codex"),
                    Clause("equals", "gpt-5-5-codex"),
                ),
            ),
            (
                ListedPrice(
                    Rate("5", ((272000, "10"),)),
                    Rate("30", ((272000, "45"),)),
                    Rate("0.5", ((272000, "1"),)),
                    None,
                    None,
                ),
            ),
        ),
        ListedModel(
            "gpt-5.5-cyber",
            Clause("equals", "gpt-5.5-cyber"),
            (
                ListedPrice(Rate("12.5"), Rate("75"), None, None, None),
                ListedPrice(Rate("12.5"), Rate("75"), Rate("1.25"), None, "2026-10-19"),
            ),
        ),
        ListedModel(
            "gpt-5.5-pro",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.5-pro"),
                    Clause("equals", "gpt-5.5-pro-2026-04-23"),
                    Clause("equals", "gpt-5-5-pro"),
                    Clause("equals", "gpt-5-5-pro-2026-04-23"),
                ),
            ),
            (
                ListedPrice(
                    Rate("30", ((272000, "60"),)), Rate("180", ((272000, "270"),)), None, None, None
                ),
            ),
        ),
        ListedModel(
            "gpt-5.6-cyber",
            Clause("equals", "gpt-5.6-cyber"),
            (ListedPrice(Rate("12.5"), Rate("75"), Rate("1.25"), Rate("15.625"), None),),
        ),
        ListedModel(
            "gpt-5.6-luna",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.6-luna"),
                    Clause("equals", "gpt-5-6-luna"),
                    Clause("regex", "^gpt-5\\.6-luna-\\d{4}-\\d{2}-\\d{2}$"),
                    Clause("regex", "^gpt-5-6-luna-\\d{4}-\\d{2}-\\d{2}$"),
                ),
            ),
            (
                ListedPrice(
                    Rate("1", ((272000, "2"),)),
                    Rate("6", ((272000, "9"),)),
                    Rate("0.1", ((272000, "0.2"),)),
                    Rate("1.25", ((272000, "2.5"),)),
                    None,
                ),
                ListedPrice(
                    Rate("0.2", ((272000, "0.4"),)),
                    Rate("1.2", ((272000, "1.8"),)),
                    Rate("0.02", ((272000, "0.04"),)),
                    Rate("0.25", ((272000, "0.5"),)),
                    "2026-07-30",
                ),
            ),
        ),
        ListedModel(
            "gpt-5.6-sol",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.6-sol"),
                    Clause("equals", "gpt-5-6-sol"),
                    Clause("equals", "gpt-5.6"),
                    Clause("equals", "gpt-5-6"),
                    Clause("regex", "^gpt-5\\.6-sol-\\d{4}-\\d{2}-\\d{2}$"),
                    Clause("regex", "^gpt-5-6-sol-\\d{4}-\\d{2}-\\d{2}$"),
                ),
            ),
            (
                ListedPrice(
                    Rate("5", ((272000, "10"),)),
                    Rate("30", ((272000, "45"),)),
                    Rate("0.5", ((272000, "1"),)),
                    Rate("6.25", ((272000, "12.5"),)),
                    None,
                ),
                ListedPrice(
                    Rate("4", ((272000, "8"),)),
                    Rate("20", ((272000, "30"),)),
                    Rate("0.4", ((272000, "0.8"),)),
                    Rate("5", ((272000, "10"),)),
                    "2026-08-21",
                ),
            ),
        ),
        ListedModel(
            "gpt-5.6-terra",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-5.6-terra"),
                    Clause("equals", "gpt-5-6-terra"),
                    Clause("regex", "^gpt-5\\.6-terra-\\d{4}-\\d{2}-\\d{2}$"),
                    Clause("regex", "^gpt-5-6-terra-\\d{4}-\\d{2}-\\d{2}$"),
                ),
            ),
            (
                ListedPrice(
                    Rate("2.5", ((272000, "5"),)),
                    Rate("15", ((272000, "22.5"),)),
                    Rate("0.25", ((272000, "0.5"),)),
                    Rate("3.125", ((272000, "6.25"),)),
                    None,
                ),
                ListedPrice(
                    Rate("2", ((272000, "4"),)),
                    Rate("12", ((272000, "18"),)),
                    Rate("0.2", ((272000, "0.4"),)),
                    Rate("2.5", ((272000, "5"),)),
                    "2026-07-30",
                ),
            ),
        ),
        ListedModel(
            "gpt-6-astra",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-6-astra"),
                    Clause("regex", "^gpt-6-astra-\\d{4}-\\d{2}-\\d{2}$"),
                ),
            ),
            (
                ListedPrice(
                    Rate("10", ((272000, "20"),)),
                    Rate("50", ((272000, "75"),)),
                    Rate("1", ((272000, "2"),)),
                    Rate("12.5", ((272000, "25"),)),
                    None,
                ),
            ),
        ),
        ListedModel(
            "gpt-6-cyber",
            Clause("equals", "gpt-6-cyber"),
            (ListedPrice(Rate("20"), Rate("100"), Rate("2"), Rate("25"), None),),
        ),
        ListedModel(
            "gpt-6-luna",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-6-luna"),
                    Clause("regex", "^gpt-6-luna-\\d{4}-\\d{2}-\\d{2}$"),
                ),
            ),
            (
                ListedPrice(
                    Rate("0.1", ((272000, "0.2"),)),
                    Rate("0.5", ((272000, "0.75"),)),
                    Rate("0.01", ((272000, "0.02"),)),
                    Rate("0.125", ((272000, "0.25"),)),
                    None,
                ),
            ),
        ),
        ListedModel(
            "gpt-6-rosalind",
            Clause("equals", "gpt-6-rosalind"),
            (
                ListedPrice(
                    Rate("15", ((272000, "30"),)),
                    Rate("75", ((272000, "112.5"),)),
                    Rate("1.5", ((272000, "3"),)),
                    Rate("18.75", ((272000, "37.5"),)),
                    None,
                ),
            ),
        ),
        ListedModel(
            "gpt-6-sol",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-6-sol"),
                    Clause("regex", "^gpt-6-sol-\\d{4}-\\d{2}-\\d{2}$"),
                ),
            ),
            (
                ListedPrice(
                    Rate("2", ((272000, "4"),)),
                    Rate("10", ((272000, "15"),)),
                    Rate("0.2", ((272000, "0.4"),)),
                    Rate("2.5", ((272000, "5"),)),
                    None,
                ),
            ),
        ),
        ListedModel(
            "gpt-6.1-sol",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-6.1-sol"),
                    Clause("regex", "^gpt-6\\.1-sol-\\d{4}-\\d{2}-\\d{2}$"),
                ),
            ),
            (
                ListedPrice(
                    Rate("2", ((272000, "4"),)),
                    Rate("10", ((272000, "15"),)),
                    Rate("0.1", ((272000, "0.2"),)),
                    Rate("2.5", ((272000, "5"),)),
                    None,
                ),
            ),
        ),
        ListedModel(
            "gpt-6.1-terra",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-6.1-terra"),
                    Clause("regex", "^gpt-6\\.1-terra-\\d{4}-\\d{2}-\\d{2}$"),
                ),
            ),
            (
                ListedPrice(
                    Rate("1", ((272000, "2"),)),
                    Rate("5", ((272000, "7.5"),)),
                    Rate("0.05", ((272000, "0.1"),)),
                    Rate("1.25", ((272000, "2.5"),)),
                    None,
                ),
            ),
        ),
        ListedModel(
            "gpt-audio",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-audio"),
                    Clause("equals", "gpt-audio-2025-08-28"),
                    Clause("equals", "gpt-audio-1.5"),
                ),
            ),
            (ListedPrice(Rate("2.5"), Rate("10"), None, None, None),),
        ),
        ListedModel(
            "gpt-audio-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-audio-mini"),
                    Clause("equals", "gpt-audio-mini-2025-10-06"),
                    Clause("equals", "gpt-audio-mini-2025-12-15"),
                ),
            ),
            (ListedPrice(Rate("0.6"), Rate("2.4"), None, None, None),),
        ),
        ListedModel(
            "gpt-chat-latest",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-chat-latest"),
                    Clause("equals", "chat-latest"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("30"), Rate("0.5"), None, None),),
        ),
        ListedModel(
            "gpt-image-1",
            Clause("equals", "gpt-image-1"),
            (ListedPrice(Rate("5"), Rate("40"), Rate("1.25"), None, None),),
        ),
        ListedModel(
            "gpt-image-1-mini",
            Clause("or", parts=(Clause("equals", "gpt-image-1-mini"),)),
            (ListedPrice(Rate("2"), Rate("8"), Rate("0.2"), None, None),),
        ),
        ListedModel(
            "gpt-image-1.5",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-image-1.5"),
                    Clause("equals", "gpt-image-1.5-2025-12-16"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("10"), Rate("1.25"), None, None),),
        ),
        ListedModel(
            "gpt-image-2",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-image-2"),
                    Clause("equals", "gpt-image-2-2026-04-21"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("30"), Rate("1.25"), None, None),),
        ),
        ListedModel(
            "gpt-image-2.5-flare",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-image-2.5-flare"),
                    Clause("equals", "gpt-image-2.5-flare-2026-09-08"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("30"), Rate("1.25"), None, None),),
        ),
        ListedModel(
            "gpt-image-2.5-sunburst",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-image-2.5-sunburst"),
                    Clause("equals", "gpt-image-2.5-sunburst-2026-09-08"),
                ),
            ),
            (ListedPrice(Rate("5"), Rate("30"), Rate("1.25"), None, None),),
        ),
        ListedModel(
            "gpt-live-1",
            Clause("equals", "gpt-live-1"),
            (ListedPrice(None, None, None, None, None),),
        ),
        ListedModel(
            "gpt-live-transcribe",
            Clause("equals", "gpt-live-transcribe"),
            (ListedPrice(None, None, None, None, None),),
        ),
        ListedModel(
            "gpt-oss-120b",
            Clause("equals", "gpt-oss-120b"),
            (ListedPrice(Rate("0.039"), Rate("0.18"), None, None, None),),
        ),
        ListedModel(
            "gpt-oss-20b",
            Clause("equals", "gpt-oss-20b"),
            (ListedPrice(Rate("0.029"), Rate("0.14"), None, None, None),),
        ),
        ListedModel(
            "gpt-oss-safeguard-20b",
            Clause("equals", "gpt-oss-safeguard-20b"),
            (ListedPrice(Rate("0.075"), Rate("0.3"), Rate("0.037"), None, None),),
        ),
        ListedModel(
            "gpt-realtime",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-realtime"),
                    Clause("equals", "gpt-realtime-2025-08-28"),
                    Clause("equals", "gpt-realtime-1.5"),
                ),
            ),
            (ListedPrice(Rate("4"), Rate("16"), Rate("0.4"), None, None),),
        ),
        ListedModel(
            "gpt-realtime-2",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-realtime-2"),
                    Clause("equals", "gpt-realtime-2.1"),
                ),
            ),
            (ListedPrice(Rate("4"), Rate("24"), Rate("0.4"), None, None),),
        ),
        ListedModel(
            "gpt-realtime-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "gpt-realtime-mini"),
                    Clause("equals", "gpt-realtime-2.1-mini"),
                    Clause("equals", "gpt-realtime-mini-2025-12-15"),
                    Clause("equals", "gpt-realtime-mini-2025-10-06"),
                ),
            ),
            (ListedPrice(Rate("0.6"), Rate("2.4"), Rate("0.06"), None, None),),
        ),
        ListedModel(
            "gpt-realtime-translate",
            Clause("equals", "gpt-realtime-translate"),
            (ListedPrice(None, None, None, None, None),),
        ),
        ListedModel(
            "gpt-realtime-whisper",
            Clause("equals", "gpt-realtime-whisper"),
            (ListedPrice(None, None, None, None, None),),
        ),
        ListedModel(
            "gpt-rosalind-discovery",
            Clause("equals", "gpt-rosalind-discovery"),
            (ListedPrice(Rate("5"), Rate("25"), Rate("0.5"), None, None),),
        ),
        ListedModel(
            "gpt-rosalind-research",
            Clause("equals", "gpt-rosalind-research"),
            (ListedPrice(Rate("5"), Rate("25"), Rate("0.5"), None, None),),
        ),
        ListedModel(
            "gpt-transcribe",
            Clause("equals", "gpt-transcribe"),
            (ListedPrice(None, None, None, None, None),),
        ),
        ListedModel(
            "moderation",
            Clause("contains", "moderation"),
            (ListedPrice(None, None, None, None, None),),
        ),
        ListedModel(
            "o1",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o1"),
                    Clause("equals", "o1-2024-12-17"),
                ),
            ),
            (ListedPrice(Rate("15"), Rate("60"), Rate("7.5"), None, None),),
        ),
        ListedModel(
            "o1-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o1-mini"),
                    Clause("equals", "o1-mini-2024-09-12"),
                ),
            ),
            (ListedPrice(Rate("1.1"), Rate("4.4"), Rate("0.55"), None, None),),
        ),
        ListedModel(
            "o1-preview",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o1-preview"),
                    Clause("equals", "o1-preview-2024-09-12"),
                ),
            ),
            (ListedPrice(Rate("15"), Rate("60"), Rate("7.5"), None, None),),
        ),
        ListedModel(
            "o1-pro",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o1-pro"),
                    Clause("equals", "o1-pro-2025-03-19"),
                ),
            ),
            (ListedPrice(Rate("150"), Rate("600"), None, None, None),),
        ),
        ListedModel(
            "o3",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o3"),
                    Clause("equals", "o3-2025-04-16"),
                ),
            ),
            (
                ListedPrice(Rate("10"), Rate("40"), Rate("0.5"), None, None),
                ListedPrice(Rate("2"), Rate("8"), Rate("0.5"), None, "2025-06-10"),
            ),
        ),
        ListedModel(
            "o3-deep-research",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o3-deep-research"),
                    Clause("equals", "o3-deep-research-2025-06-26"),
                ),
            ),
            (ListedPrice(Rate("10"), Rate("40"), Rate("2.5"), None, None),),
        ),
        ListedModel(
            "o3-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o3-mini"),
                    Clause("equals", "o3-mini-2025-01-31"),
                    Clause("equals", "o3-mini-high"),
                ),
            ),
            (ListedPrice(Rate("1.1"), Rate("4.4"), Rate("0.55"), None, None),),
        ),
        ListedModel(
            "o3-pro",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o3-pro"),
                    Clause("equals", "o3-pro-2025-06-10"),
                ),
            ),
            (ListedPrice(Rate("20"), Rate("80"), None, None, None),),
        ),
        ListedModel(
            "o4-mini",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o4-mini-2025-04-16"),
                    Clause("equals", "o4-mini-high"),
                    Clause("equals", "o4-mini"),
                ),
            ),
            (ListedPrice(Rate("1.1"), Rate("4.4"), Rate("0.275"), None, None),),
        ),
        ListedModel(
            "o4-mini-deep-research",
            Clause(
                "or",
                parts=(
                    Clause("equals", "o4-mini-deep-research"),
                    Clause("equals", "o4-mini-deep-research-2025-06-26"),
                ),
            ),
            (ListedPrice(Rate("2"), Rate("8"), Rate("0.5"), None, None),),
        ),
        ListedModel(
            "text-davinci-002",
            Clause("equals", "text-davinci-002"),
            (ListedPrice(Rate("20"), Rate("20"), None, None, None),),
        ),
        ListedModel(
            "text-davinci-003",
            Clause("equals", "text-davinci-003"),
            (ListedPrice(Rate("20"), Rate("20"), None, None, None),),
        ),
        ListedModel(
            "text-embedding-3-large",
            Clause("equals", "text-embedding-3-large"),
            (ListedPrice(Rate("0.13"), None, None, None, None),),
        ),
        ListedModel(
            "text-embedding-3-small",
            Clause("equals", "text-embedding-3-small"),
            (ListedPrice(Rate("0.02"), None, None, None, None),),
        ),
        ListedModel(
            "text-embedding-ada-002",
            Clause(
                "or",
                parts=(
                    Clause("equals", "text-embedding-ada"),
                    Clause("equals", "text-embedding-ada-002"),
                    Clause("equals", "text-embedding-ada-002-v2"),
                ),
            ),
            (ListedPrice(Rate("0.1"), None, None, None, None),),
        ),
        ListedModel(
            "tts-1", Clause("equals", "tts-1"), (ListedPrice(None, None, None, None, None),)
        ),
        ListedModel(
            "tts-1-hd", Clause("equals", "tts-1-hd"), (ListedPrice(None, None, None, None, None),)
        ),
        ListedModel(
            "whisper-1", Clause("equals", "whisper-1"), (ListedPrice(None, None, None, None, None),)
        ),
    ),
}
