import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'plant-store:public';

/** Opens a route to callers without a token. Everything else requires one (the guard is global). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
