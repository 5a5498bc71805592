"""What the mock agents of the assign example do: the same steps the profiles ask of a real model,
done deterministically (each profile names its function in ``mockBehaviour``).

- ``analysis_supervisor``: assigns one dataset to each of three ``data_analyst`` workers at once, hands
  off to a ``report_generator`` for a report template while they work, ends its turn; then takes each
  analyst's result from its inbox, removes that worker, and once all are in, fills in the template.
- ``data_analyst``: computes the statistics of the dataset in its task (about a second of work) and
  sends them with send_message to the terminal named in the task's callback line.
- ``report_generator``: writes the report template (a couple of seconds of work).
"""

from __future__ import annotations

import re
import statistics
from typing import Any

DATASET_RE = re.compile(r"dataset\s+(\w+)\s*:\s*\[([^\]]*)\]", re.IGNORECASE)
FIELDS = ("n", "mean", "median", "population standard deviation", "sample standard deviation")
ANALYST_SECONDS = 1.0
TEMPLATE_SECONDS = 2.0


def datasets(text: str) -> dict[str, list[float]]:
    """``Dataset A: [1, 2, 3]`` phrases of a task, in order."""
    found = {name: [float(v) for v in values.split(",") if v.strip()] for name, values in DATASET_RE.findall(text)}
    if not found:
        raise ValueError("the task names no dataset (expected phrases like 'Dataset A: [1, 2, 3]')")
    return found


def number(value: float) -> str:
    """Three decimals at most, without trailing zeros: 3, 4.5, 1.414."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def describe(values: list[float]) -> dict[str, str]:
    """The statistics the analysts report. Population SD divides by n, sample SD by n - 1."""
    return {
        "n": str(len(values)),
        "mean": number(statistics.fmean(values)),
        "median": number(statistics.median(values)),
        "population standard deviation": number(statistics.pstdev(values)),
        "sample standard deviation": number(statistics.stdev(values)) if len(values) > 1 else "undefined (n = 1)",
    }


async def data_analyst(turn: Any) -> str:
    ((name, values),) = datasets(turn.task).items()
    turn.say(f"computing statistics of dataset {name} ({len(values)} values)")
    await turn.think(ANALYST_SECONDS)
    lines = [f"Result for dataset {name}", f"values: [{', '.join(number(v) for v in values)}]"]
    lines += [f"{field}: {value}" for field, value in describe(values).items()]
    result = "\n".join(lines)
    if turn.assigned_by is None:  # handed off: the answer is the result
        return result
    await turn.call("send_message", receiver_id=turn.assigned_by, message=result)
    return f"Sent the statistics of dataset {name} to terminal {turn.assigned_by}."


async def report_generator(turn: Any) -> str:
    names = list(datasets(turn.task))
    turn.say(f"drafting a template for datasets {', '.join(names)}")
    await turn.think(TEMPLATE_SECONDS)
    lines = ["DATA ANALYSIS REPORT", f"Datasets: {', '.join(names)}", ""]
    for name in names:
        lines.append(f"Dataset {name}: {{{name}.values}}")
        lines += [f"  {field}: {{{name}.{field}}}" for field in FIELDS]
    lines += ["", "Population standard deviation divides by n; sample standard deviation divides by n - 1."]
    return "\n".join(lines)


async def analysis_supervisor(turn: Any) -> str:
    memory = turn.memory
    if "results" not in memory:
        return await _delegate(turn, memory)
    # Results come one per input, unless one analyst sent several: take every message of the input.
    for message in turn.messages:
        result = _parse_result(message.text)
        memory["results"][result["dataset"]] = result
        if message.sender is not None:
            await turn.call("delete_terminal", terminal_id=message.sender)
    missing = [name for name in memory["datasets"] if name not in memory["results"]]
    if missing:
        got = ", ".join(sorted(memory["results"]))
        return f"Have the results for {got}; waiting for {', '.join(missing)}."
    return _fill(memory["template"], memory["results"])


async def _delegate(turn: Any, memory: dict[str, Any]) -> str:
    found = datasets(turn.task)
    memory.update(datasets=list(found), results={})
    tasks = [
        f"Analyze dataset {name}: [{', '.join(number(v) for v in values)}]. Compute n, the mean, the median, "
        "the population standard deviation and the sample standard deviation."
        for name, values in found.items()
    ]
    # Imported here: mock_cli loads this module before it shows its prompt, and asyncio takes a while.
    import asyncio

    # Three assigns at once: each returns as soon as its worker exists, and the workers run in parallel.
    assigned = await asyncio.gather(*(turn.call("assign", agent_profile="data_analyst", message=task)
                                      for task in tasks))
    failed = [a for a in assigned if not a.get("success")]
    if failed:
        raise RuntimeError(f"assign failed: {failed[0].get('message')}")
    listed = "; ".join(f"Dataset {name}: [{', '.join(number(v) for v in values)}]" for name, values in found.items())
    handed = await turn.call(
        "handoff", agent_profile="report_generator",
        message=(f"Write a report template for the statistics of these datasets: {listed}. Use placeholders "
                 "like {A.mean} for each dataset's n, mean, median, population standard deviation and sample "
                 "standard deviation, and {A.values} for its values."),
    )
    if not handed.get("success"):
        raise RuntimeError(f"handoff failed: {handed.get('message')}")
    memory["template"] = handed["output"]
    workers = ", ".join(a["terminal_id"] for a in assigned)
    return (f"Assigned {len(assigned)} data analysts (terminals {workers}) and received the report template; "
            "waiting for their results.")


def _parse_result(text: str) -> dict[str, str]:
    lines = text.strip().splitlines()
    match = re.match(r"Result for dataset (\w+)", lines[0]) if lines else None
    if match is None:
        raise ValueError(f"not an analyst's result: {text[:80]!r}")
    fields = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return {"dataset": match.group(1), **fields}


def _fill(template: str, results: dict[str, dict[str, str]]) -> str:
    def value(match: re.Match[str]) -> str:
        name, field = match.group(1), match.group(2)
        return results.get(name, {}).get(field, match.group(0))

    return re.sub(r"\{(\w+)\.([\w ]+)\}", value, template)
