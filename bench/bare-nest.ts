/**
 * The benchmark's anchor: a bare Nest 11 (express) app with one hello route and nothing else
 * (no logging, guards, pipes or database), started as its own process and pinned like the
 * service, so every route of the service can be reported against what Nest itself costs on
 * this machine in the same run.
 */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

@Controller()
class HelloController {
  @Get('hello')
  hello(): { status: string } {
    return { status: 'ok' };
  }
}

@Module({ controllers: [HelloController] })
class BareModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(BareModule, { logger: false });
  await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

void main();
