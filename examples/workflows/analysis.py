"""The assign example's analysis as a workflow: three analysts in parallel, a report template meanwhile
from the report generator, the report filled in here, and a person's approval before it is published.

    cao workflow run examples/workflows/analysis.py --detach
    cao workflow status RUN          # "waiting": the question and how to answer it
    cao workflow approve RUN --note "ship it"
    cao workflow result RUN

It uses the assign example's profiles (``cao install examples/assign/data_analyst.md`` and
``report_generator.md``); with the mock provider it runs offline. Inputs: ``datasets``, phrases like
``A: [1, 2, 3]; B: [4, 5]`` (the example's three datasets when absent).
"""

import re

from cao_workflows import Step, approve, assign_step, emit

DATASETS = "A: [1, 2, 3, 4, 5]; B: [10, 20, 30, 40, 50, 60]; C: [2, 4, 4, 4, 5, 5, 7, 9]"
FIELDS = ("n", "mean", "median", "population standard deviation", "sample standard deviation")


def workflow(inputs):
    datasets = dict(re.findall(r"(\w+)\s*:\s*(\[[^\]]*\])", inputs.get("datasets") or DATASETS))
    task = ("Analyze dataset {name}: {values}. Compute n, the mean, the median, the population standard "
            "deviation and the sample standard deviation.")
    # The three analyses and the template are independent: all four run at once.
    listed = "; ".join(f"Dataset {name}: {values}" for name, values in datasets.items())
    steps = [Step(profile="data_analyst", prompt=task.format(name=name, values=values),
                  label=f"analysis-{name}") for name, values in datasets.items()]
    steps.append(Step(profile="report_generator", label="template",
                      prompt=(f"Write a report template for the statistics of these datasets: {listed}. Use "
                              "placeholders like {A.mean} for each dataset's n, mean, median, population "
                              "standard deviation and sample standard deviation, and {A.values} for its "
                              "values.")))
    *results, template = assign_step(steps)
    report = fill(template, {parse(result)["dataset"]: parse(result) for result in results})
    emit("report", report)
    decision = approve("Publish this report?\n\n" + report)
    emit("published", decision.approved)
    if not decision:
        return f"Not published ({decision.note or 'rejected'})."
    return report


def parse(result):
    """An analyst's answer (``Result for dataset A`` then ``field: value`` lines) as a dict."""
    lines = result.strip().splitlines()
    found = re.match(r"Result for dataset (\w+)", lines[0]) if lines else None
    if found is None:
        raise ValueError(f"not an analyst's result: {result[:80]!r}")
    return {"dataset": found.group(1), **dict(line.split(": ", 1) for line in lines[1:] if ": " in line)}


def fill(template, results):
    """The template with each ``{A.mean}`` replaced by dataset A's mean."""
    return re.sub(r"\{(\w+)\.([\w ]+)\}",
                  lambda m: results.get(m.group(1), {}).get(m.group(2), m.group(0)), template)
