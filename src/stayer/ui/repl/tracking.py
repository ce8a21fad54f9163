"""What the REPL keeps from the event stream for its footer and `/cost`: the model answering,
the permission mode, the context in use and the session's totals (`surface.Totals`)."""

from __future__ import annotations

from stayer.events import (
    Event,
    Finished,
    MessageDelta,
    MessageStarted,
    ModelSwitched,
    SessionStarted,
)

from .surface import Totals


class Tracker:
    """Totals, model and mode as the events say; `running` is whether a run is going."""

    def __init__(self, mode: str) -> None:
        self.totals = Totals()
        self.model = ""
        self.mode = mode
        self.running = False

    def take(self, event: Event) -> None:
        match event:
            case SessionStarted(model=model, context_window=window, permission_mode=mode):
                self.model, self.mode = model, mode
                self.totals.context_window = window or self.totals.context_window
            case MessageStarted(usage=usage) | MessageDelta(usage=usage):
                self.running = True
                sent = usage.input_tokens + usage.cache_read_input_tokens
                sent += usage.cache_creation_input_tokens
                if sent:
                    self.totals.context_tokens = sent
            case ModelSwitched(to_model=model):
                self.model = model
            case Finished():
                self._finished(event)
            case _:
                pass

    def _finished(self, event: Finished) -> None:
        totals = self.totals
        totals.cost_usd += event.cost_usd
        totals.input_tokens += event.usage.input_tokens
        totals.output_tokens += event.usage.output_tokens
        totals.cache_read_tokens += event.usage.cache_read_input_tokens
        totals.cache_write_tokens += event.usage.cache_creation_input_tokens
        totals.runs += 1
        totals.api_duration_ms += event.duration_api_ms
        totals.wall_duration_ms += event.duration_ms
        self.running = False
