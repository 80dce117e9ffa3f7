from neuronlint.cli import main

main()
