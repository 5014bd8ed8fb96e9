"""Files other runners write (OpenAI Batch / `vllm run-batch` output, lm-eval `--log_samples`,
Inspect AI eval logs), read back into each dataset's native predictions rows."""
