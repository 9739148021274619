#!/bin/bash
echo hello
# vllm serve commented/out --tp 2
