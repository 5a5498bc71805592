"""``python -m cao_provider_mock`` runs the mock_cli program."""

from cao_provider_mock.agent import main

raise SystemExit(main())
