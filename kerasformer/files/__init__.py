"""Files and directories: reading text files safely, naming and staging output directories."""
