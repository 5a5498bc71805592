"""Steps the recording scenarios of many agent CLIs share: the same model turns and the same messages,
told apart only by what each CLI draws (the signs a scenario passes in) and by the CLI's own tool calls.
Each step saves its screens under the names every provider's manifest uses for them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .models.script import Answer, Failure, hold, reply
from .recorder import ScreenRecorder, Sign

if TYPE_CHECKING:
    from cao_hookspecs import Prompt

__all__ = ["ANSWER", "CHOSEN", "LONG_ANSWER", "MESSAGE", "QUESTION", "Outcome", "answer_each_option",
           "approval_turn", "asking", "failed_turn", "held_turn", "question_turn", "tool_turn"]

#: What the user sends in :func:`held_turn`, and the model's answer to it.
MESSAGE = "Summarise the repository."
ANSWER = "The repository has 3 packages; all tests pass."
#: What the model answers after a tool in :func:`tool_turn` (a CLI that renders Markdown shows it changed).
LONG_ANSWER = (
    "I listed the folder.\n\n"
    "Findings:\n\n"
    "- the build script is missing a clean step\n"
    "- two tests are slow\n\n"
    "Next I would add the clean step."
)
#: The question the model asks in :func:`question_turn` (in the shape of the CLI's question tool), and its
#: answer once the user took the first option, ``SQLite`` (the other is ``Postgres``).
QUESTION = "Which database should I use?"
CHOSEN = "Going with SQLite."


def held_turn(rec: ScreenRecorder, *, busy: Sign, ready: Sign, suffix: str = "", animated: bool = True,
              arrival_timeout: float = 10.0) -> None:
    """``processing<suffix>`` and ``completed<suffix>``: :data:`MESSAGE` is sent and the model's answer
    held open by the server until the CLI shows it is busy (``busy``; ``animated``: a spinner that never
    lets the screen settle), then let go until the answer is shown with the prompt back (``ready``)."""
    gate = threading.Event()
    script = rec.server.script
    script.add(hold(gate, reply(ANSWER)))
    served = script.served
    rec.type(MESSAGE)
    rec.server.wait_for_arrivals(served + 1, timeout=arrival_timeout)
    screen = (rec.wait_sign if animated else rec.wait)(busy, "the busy screen")
    rec.save(f"processing{suffix}", screen, "processing", note="model turn held open by the server")
    gate.set()
    screen = rec.wait(lambda s: ANSWER in s and ready(s), "the answer")
    rec.save(f"completed{suffix}", screen, "completed", last_message=ANSWER)


def tool_turn(rec: ScreenRecorder, call: Answer, *, ready: Sign, suffix: str = "", answer: str = LONG_ANSWER,
              shown: str | None = None, running: Sign | None = None, running_note: str = "") -> None:
    """``completed_after_tool<suffix>``: the model calls a tool (``call``), then answers ``answer``, which
    the CLI shows as ``shown`` (default: as written); with ``running`` (the sign of the tool still
    running, which animates), ``processing_tool<suffix>`` is taken while it runs."""
    rec.server.script.add(call, reply(answer))
    rec.type("Look around and report.")
    if running is not None:
        screen = rec.wait_sign(running, "the running tool")
        rec.save(f"processing_tool{suffix}", screen, "processing", note=running_note)
    last_line = answer.split("\n")[-1]
    screen = rec.wait(lambda s: last_line in s and ready(s), "the long answer")
    rec.save(f"completed_after_tool{suffix}", screen, "completed", last_message=shown or answer)


def failed_turn(rec: ScreenRecorder, failure: Failure, *, shows: str, ready: Sign, note: str,
                suffix: str = "") -> None:
    """``error<suffix>``: the model API answers with ``failure`` and the CLI shows ``shows`` with its
    prompt back."""
    rec.server.script.add(failure)
    rec.type("Try once more.")
    screen = rec.wait(lambda s: shows in s and ready(s), "the API error")
    rec.save(f"error{suffix}", screen, "error", note=note)


def question_turn(rec: ScreenRecorder, call: Answer, *, asking: Sign, ready: Sign, note: str,
                  animated: bool = False) -> None:
    """``waiting_user_answer_question`` and ``completed_after_question``: the model asks :data:`QUESTION`
    with the CLI's question tool (``call``); once the CLI shows it (``asking``), Enter takes the first
    option and the model answers :data:`CHOSEN`."""
    rec.server.script.add(call, reply(CHOSEN))
    rec.type("Set up storage.")
    screen = (rec.wait_sign if animated else rec.wait)(asking, "the question")
    rec.save("waiting_user_answer_question", screen, "waiting_user_answer", note=note)
    rec.keys("Enter")
    screen = rec.wait(lambda s: CHOSEN in s and ready(s), "the answer after the choice")
    rec.save("completed_after_question", screen, "completed", last_message=CHOSEN)


def approval_turn(rec: ScreenRecorder, call: Answer, *, asking: Sign, ready: Sign, note: str,
                  animated: bool = False, approved: str = "completed_after_permission") -> None:
    """``waiting_user_answer`` and ``approved``: the model calls a tool that creates a file (``call``); once
    the CLI asks whether to run it (``asking``), Enter approves and the model answers."""
    rec.server.script.add(call, reply("Created the file."))
    rec.type("Create a file.")
    screen = (rec.wait_sign if animated else rec.wait)(asking, "the approval question")
    rec.save("waiting_user_answer", screen, "waiting_user_answer", note=note)
    rec.keys("Enter")
    screen = rec.wait(lambda s: "Created the file." in s and ready(s), "the answer after approval")
    rec.save(approved, screen, "completed", last_message="Created the file.")


class Outcome(NamedTuple):
    """What the CLI shows once an option was picked: the sign to wait for and the status it means
    (labelled by the scenario, never by the detector); ``animated`` for a screen that never settles;
    ``last_message`` the answer a completed screen shows."""

    sign: Sign
    status: str
    note: str = ""
    animated: bool = False
    last_message: str | None = None


def answer_each_option(start: Callable[[], ScreenRecorder], ask: Callable[[ScreenRecorder], str],
                       read_prompt: Callable[[str], Prompt | None], *, name: str,
                       outcomes: Mapping[int, Outcome], save_prompt: bool = True, note: str = "") -> None:
    """Prove each option's keys: for every option number in ``outcomes``, a fresh terminal (``start``)
    is brought to the prompt (``ask`` returns the prompt screen), the prompt is read with the provider's
    ``read_prompt``, the option's keys are pressed, and the screen that follows is saved as
    ``<name>_answer<n>`` with ``answers`` naming the prompt screen, the option and the keys pressed.
    The first run also saves the prompt screen as ``<name>`` with the prompt read (``save_prompt``).
    Options the prompt has but ``outcomes`` lacks are an error: every option is proven."""
    saved = False
    for number, outcome in sorted(outcomes.items()):
        rec = start()
        try:
            screen = ask(rec)
            prompt = read_prompt(screen)
            if prompt is None:
                raise SystemExit(f"{name}: the provider read no prompt on the screen:\n{screen}")
            missing = sorted(set(range(1, len(prompt.options) + 1)) - set(outcomes))
            if missing:
                raise SystemExit(f"{name}: options {missing} of {[o.label for o in prompt.options]} have no "
                                 "outcome to record")
            if save_prompt and not saved:
                rec.save(name, screen, "waiting_user_answer", prompt=prompt, note=note)
                saved = True
            keys = list(prompt.option(number).keys)
            rec.keys(*keys)
            after = (rec.wait_sign if outcome.animated else rec.wait)(
                outcome.sign, f"the screen after option {number} ({prompt.option(number).label})")
            taken = read_prompt(after) if outcome.status == "waiting_user_answer" else _NOT_WAITING
            rec.save(f"{name}_answer{number}", after, outcome.status, note=outcome.note,
                     last_message=outcome.last_message,
                     answers={"screen": name, "option": number, "keys": keys},
                     **({} if taken is _NOT_WAITING else {"prompt": taken}))
        finally:
            rec.stop()


_NOT_WAITING = object()


def asking(script: Any, call: Answer, sign: Sign, message: str, follow_ups: Mapping[int, Answer], *,
           animated: bool = False) -> Callable[[ScreenRecorder], str]:
    """The ``ask`` of :func:`answer_each_option` for a prompt a model's tool call raises: each run queues
    ``call`` on ``script`` (the model server's), types ``message`` and returns the screen once it shows
    ``sign`` (``animated``: a screen that never settles). Runs are made for options 1, 2, ... in order;
    the model is asked again only after options that let the call go on (``follow_ups``)."""
    runs = iter(range(1, 100))

    def ask(rec: ScreenRecorder) -> str:
        number = next(runs)
        script.add(call, *([follow_ups[number]] if number in follow_ups else []))
        rec.type(message)
        return (rec.wait_sign if animated else rec.wait)(sign, "the prompt")

    return ask
