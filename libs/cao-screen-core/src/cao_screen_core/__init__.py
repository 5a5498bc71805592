"""What cao's providers share to read an agent CLI's rendered screen (``capture-pane`` text, no
colours): finding rows, the input box between two rules, indented answer blocks, and reports that
never raise."""
