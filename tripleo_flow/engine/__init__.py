"""The workflow engine: Mistral v2 workbooks (the language: model, loader, validator,
expressions, ad-hoc actions) compiled to TaskFlow graphs, or run by Mistral's state
machine for direct workflows that loop, join or repeat a task; executions persisted and
resumable (runner, executions database, pause, cancel, undo journal, redaction), and
run beyond one machine on TaskFlow jobboards and conductors.  The README's layout section
names each module's part."""
