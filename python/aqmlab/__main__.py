from aqmlab.cli import main

main()
