// the console's script
