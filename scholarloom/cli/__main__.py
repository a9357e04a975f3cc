from scholarloom.cli import app

app()
