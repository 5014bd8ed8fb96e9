"""GSM-IC evaluation: prompts, answer extraction, accuracy statistics, scoring and rendering."""
