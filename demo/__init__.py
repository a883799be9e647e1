"""The embedded demo: a company's business-log generator, its small chat model's trainer and
scorer. A user of the pipeline (its params section is `demo:`); the pipeline never imports it."""
