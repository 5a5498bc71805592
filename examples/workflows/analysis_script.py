"""The analysis as a script written for upstream CAO's script tier: it runs unchanged under cao.

    cao workflow run examples/workflows/analysis_script.py [--input provider=mock_cli]

A script is top-level code that imports ``cao_workflow`` (no ``workflow(inputs)`` function); cao runs it
as a process of its own and journals each ``run_step`` on the server, so after a server restart the
script runs again and its finished steps answer from the journal (``replayed``) without an agent.
It uses the assign example's profiles (``cao install examples/assign/data_analyst.md`` and
``report_generator.md``); with the mock provider it runs offline.
"""

import re

from cao_workflow import emit_output, get_inputs, run_step

DATASETS = {"A": "[1, 2, 3, 4, 5]", "B": "[10, 20, 30, 40, 50, 60]", "C": "[2, 4, 4, 4, 5, 5, 7, 9]"}

inputs = get_inputs()
provider = inputs.get("provider", "mock_cli")
results = {}
for name, values in DATASETS.items():
    # Named steps: the journal's keys stay the same if the list of datasets is ever reordered.
    answer = run_step(provider, "data_analyst", f"Analyze dataset {name}: {values}. Compute n, the mean, the "
                      "median, the population standard deviation and the sample standard deviation.",
                      step_id=f"analysis-{name}").output
    lines = answer.strip().splitlines()
    results[name] = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)

listed = "; ".join(f"Dataset {name}: {values}" for name, values in DATASETS.items())
template = run_step(provider, "report_generator",
                    f"Write a report template for the statistics of these datasets: {listed}. Use "
                    "placeholders like {A.mean} for each dataset's n, mean, median, population standard "
                    "deviation and sample standard deviation, and {A.values} for its values.",
                    step_id="template").output
report = re.sub(r"\{(\w+)\.([\w ]+)\}", lambda m: results.get(m.group(1), {}).get(m.group(2), m.group(0)),
                template)
print(f"filled a report of {len(report)} characters")  # progress lines are fine: only the output line counts
emit_output({"report": report, "datasets": sorted(results)})
