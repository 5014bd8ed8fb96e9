"""Publishing a release: its dataset card, its Croissant record, and the upload to the Hugging Face Hub."""
