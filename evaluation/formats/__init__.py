"""Files other runners write (OpenAI Batch / `vllm run-batch` output, lm-eval `--log_samples`,
Inspect AI eval logs) and the native rows written as a CSV or Parquet table, read back into each
dataset's native predictions rows (convert.py), one record at a time; the files of one run grouped into one
submission per model (grouping.py); and the OpenAI Batch input `prompts --format openai-batch` writes.
Every file is read as a regular file within bounds, and its JSON with a depth limit (files.py)."""
