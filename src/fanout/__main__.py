from fanout.cli import main

raise SystemExit(main())
