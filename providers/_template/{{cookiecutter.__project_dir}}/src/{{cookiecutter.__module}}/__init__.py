"""cao provider for {{ cookiecutter.display_name }} (entry point ``{{ cookiecutter.provider_name }}`` in group ``cao``)."""
