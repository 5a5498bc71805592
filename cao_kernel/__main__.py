from cao_kernel.cli import main

main()
