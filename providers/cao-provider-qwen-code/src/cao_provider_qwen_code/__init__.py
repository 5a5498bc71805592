"""cao provider for Qwen Code (entry point ``qwen_code`` in group ``cao``)."""
