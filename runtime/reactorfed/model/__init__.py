"""What a program is made of: reactors, ports, actions, timers, reactions, banks."""
