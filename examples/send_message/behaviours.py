"""What the mock agents of the send_message example do: the negotiation the profiles describe, played
deterministically (each profile names its function in ``mockBehaviour``).

- ``buyer``: starts a ``seller`` with assign, then talks to it only through send_message: opens with
  its first offer, raises by a fixed step while the seller's counter-offer is too high, accepts one it
  can afford, and reports the deal once the seller confirms the sale.
- ``seller``: answers every offer with a counter-offer half-way between its last price and the offer
  (rounded up to a multiple of 5, never below its floor), and confirms an accepted price.
"""

from __future__ import annotations

import math
import re
from typing import Any

ASKING_PRICE = 400
FLOOR_PRICE = 300
MOVE_RE = re.compile(r"^(Offer|Counter|Accept|Sold|No deal)\b:?\s*(\d+)?", re.IGNORECASE)


def _number(pattern: str, text: str, default: int) -> int:
    match = re.search(pattern, text, re.IGNORECASE)
    return int(match.group(1)) if match else default


def move(text: str) -> tuple[str, int | None]:
    """A negotiation message as (``offer``/``counter``/``accept``/``sold``/``no deal``, price)."""
    match = MOVE_RE.match(text.strip())
    if match is None:
        raise ValueError(f"not a negotiation move: {text[:60]!r}")
    return match.group(1).lower(), int(match.group(2)) if match.group(2) else None


async def buyer(turn: Any) -> str:
    if "seller" not in turn.memory:
        return await _open(turn, turn.memory)
    # cao types consecutive messages from one sender as one input: answer each in order.
    answers = [await _answer_seller(turn, turn.memory, message.text) for message in turn.messages]
    return "\n".join(answers)


async def _open(turn: Any, memory: dict[str, Any]) -> str:
    memory.update(budget=_number(r"budget is (\d+)", turn.task, 340), offer=_number(r"open with (\d+)", turn.task, 250),
                  step=_number(r"at most (\d+) per round", turn.task, 30), rounds=[])
    started = await turn.call(
        "assign", agent_profile="seller",
        message=(f"You are selling your used bike to the buyer in terminal {turn.terminal_id}. Their offers "
                 "will arrive as messages; answer each one with send_message."),
    )
    if not started.get("success"):
        raise RuntimeError(started.get("message"))
    memory["seller"] = started["terminal_id"]
    await turn.call("send_message", receiver_id=memory["seller"], message=f"Offer: {memory['offer']}")
    return f"Started seller {memory['seller']} and offered {memory['offer']}."


async def _answer_seller(turn: Any, memory: dict[str, Any], text: str) -> str:
    kind, price = move(text)
    seller = memory["seller"]
    if kind == "counter" and price is not None:
        memory["rounds"].append(f"buyer offered {memory['offer']}, seller countered {price}")
        if price <= memory["budget"] and price <= memory["offer"] + memory["step"]:
            await turn.call("send_message", receiver_id=seller, message=f"Accept: {price}")
            memory["rounds"].append(f"buyer accepted {price}")
            return f"Accepted {price}; waiting for the seller to confirm."
        memory["offer"] = min(memory["budget"], memory["offer"] + memory["step"])
        await turn.call("send_message", receiver_id=seller, message=f"Offer: {memory['offer']}")
        return f"The seller asked {price}; offered {memory['offer']}."
    await turn.call("delete_terminal", terminal_id=seller)
    rounds = [f"{i}. {r}" for i, r in enumerate(memory["rounds"], 1)]
    if kind != "sold":
        return "\n".join(["No deal.", "Rounds:", *rounds])
    return "\n".join([f"Deal: bought the used bike for {price}.", "Rounds:", *rounds,
                      f"The seller confirmed the sale at {price}."])


async def seller(turn: Any) -> str:
    memory = turn.memory
    # The task from assign and the buyer's first offer usually arrive together, as one input.
    answers = []
    for message in turn.messages:
        if message.kind == "assign":
            memory.update(buyer=message.sender, last=ASKING_PRICE)
            answers.append(f"Selling the bike to terminal {message.sender}; asking {ASKING_PRICE}.")
            continue
        kind, price = move(message.text)
        if kind == "offer" and price is not None and price >= FLOOR_PRICE and price >= memory["last"] - 10:
            reply = f"Sold: {price}"
        elif kind == "offer" and price is not None:
            memory["last"] = max(FLOOR_PRICE, 5 * math.ceil((memory["last"] + price) / 2 / 5))
            reply = f"Counter: {memory['last']}"
        elif kind == "accept" and price == memory["last"]:
            reply = f"Sold: {price}"
        else:
            reply = f"Counter: {memory['last']}"
        await turn.call("send_message", receiver_id=message.sender or memory["buyer"], message=reply)
        answers.append(f"Answered '{message.text.splitlines()[0]}' with '{reply}'.")
    return "\n".join(answers)
