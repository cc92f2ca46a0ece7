from aqmlab.console import main

main()
