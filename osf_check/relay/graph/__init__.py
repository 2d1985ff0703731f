"""System A's reference implementation: server (queue, runs), desktop relay loop, outbox."""
